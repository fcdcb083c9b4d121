/**
 * The `conv2d-rich` template: `conv2d`'s knobs plus tile_oh, a loop order, a
 * register tile (cache write) and padding placement.
 * @module
 */
import { splitOptions } from "../../ir/knobs.ts";
import { outHeight, outWidth, type Template } from "./template.ts";

/**
 * `conv2d-rich`.
 *
 * @example
 * ```ts
 * import { CONV2D_RICH } from "./conv2d_rich.ts";
 * if (!CONV2D_RICH.workloads.includes("conv2d")) throw new Error();
 * ```
 */
export const CONV2D_RICH: Template = {
  workloads: ["conv2d"],
  knobs: (w) => {
    const [, C, , , F] = w.shape;
    return [
      { name: "tile_ic", kind: "split", options: splitOptions(C, 2) },
      { name: "tile_oc", kind: "split", options: splitOptions(F, 2, 16) },
      { name: "tile_oh", kind: "split", options: splitOptions(outHeight(w), 2, 8) },
      { name: "tile_ow", kind: "split", options: splitOptions(outWidth(w), 2, 64) },
      { name: "order", kind: "reorder", options: [0, 1] },
      { name: "cache_write", kind: "other", options: [0, 1] },
      { name: "unroll_kw", kind: "other", options: [false, true] },
    ];
  },
  apply: (sch, v) => {
    const [tic, toc, toh, tow] = [v.tile_ic, v.tile_oc, v.tile_oh, v.tile_ow] as number[][];
    if (sch.stages.some((s) => s.name === "P")) sch.computeInline("P");
    if (v.cache_write === 1) {
      const local = sch.cacheWrite("O");
      const [f0, f1] = sch.split("O", "f", toc);
      const [y0, y1] = sch.split("O", "y", toh);
      const [x0, x1] = sch.split("O", "x", tow);
      sch.reorder("O", ["n", f0, y0, x0, f1, y1, x1]);
      sch.parallel("O", sch.fuse("O", ["n", f0, y0]));
      sch.computeAt(local, "O", x0);
      sch.vectorize("O", x1);
      const [c0, c1] = sch.split(local, "rc", tic);
      sch.reorder(
        local,
        v.order === 0
          ? [c0, "ry", "rx", c1, "n", "f", "y", "x"]
          : [c0, c1, "ry", "rx", "n", "f", "y", "x"],
      );
      sch.vectorize(local, "x");
      if (v.unroll_kw) sch.unroll(local, "rx");
      return;
    }
    const [f0, f1] = sch.split("O", "f", toc);
    const [y0, y1] = sch.split("O", "y", toh);
    const [x0, x1] = sch.split("O", "x", tow);
    const [c0, c1] = sch.split("O", "rc", tic);
    sch.reorder(
      "O",
      v.order === 0
        ? ["n", f0, y0, x0, c0, "ry", "rx", c1, f1, y1, x1]
        : ["n", f0, y0, x0, c0, c1, "ry", "rx", f1, y1, x1],
    );
    sch.parallel("O", sch.fuse("O", ["n", f0, y0]));
    sch.vectorize("O", x1);
    if (v.unroll_kw) sch.unroll("O", "rx");
  },
};
