/**
 * The `conv2d` template in the four-knob form of the RL study (tile_ic,
 * tile_oc, tile_ow, unroll_kw; AutoTVM's x86 conv2d), padding inlined.
 * @module
 */
import { splitOptions } from "../../ir/knobs.ts";
import { outWidth, type Template } from "./template.ts";

/**
 * `conv2d`: the default template of a convolution.
 *
 * @example
 * ```ts
 * import { CONV2D } from "./conv2d.ts";
 * if (!CONV2D.workloads.includes("conv2d")) throw new Error();
 * ```
 */
export const CONV2D: Template = {
  workloads: ["conv2d"],
  knobs: (w) => {
    const [, C, , , F] = w.shape;
    const OW = outWidth(w);
    return [
      { name: "tile_ic", kind: "split", options: splitOptions(C, 2) },
      { name: "tile_oc", kind: "split", options: splitOptions(F, 2) },
      { name: "tile_ow", kind: "split", options: splitOptions(OW, 2, 64) },
      { name: "unroll_kw", kind: "other", options: [false, true] },
    ];
  },
  apply: (sch, v) => {
    const [tic, toc, tow] = [v.tile_ic, v.tile_oc, v.tile_ow] as number[][];
    if (sch.stages.some((s) => s.name === "P")) sch.computeInline("P");
    const [f0, f1] = sch.split("O", "f", toc);
    const [x0, x1] = sch.split("O", "x", tow);
    const [c0, c1] = sch.split("O", "rc", tic);
    sch.reorder("O", ["n", f0, "y", x0, c0, "ry", "rx", c1, f1, x1]);
    sch.parallel("O", sch.fuse("O", ["n", f0, "y"]));
    sch.vectorize("O", x1);
    if (v.unroll_kw) sch.unroll("O", "rx");
  },
};
