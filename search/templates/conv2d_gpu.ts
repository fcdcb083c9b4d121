/**
 * The `conv2d-gpu` template (AutoTVM's conv2d_nchw direct CUDA template):
 * `tile_f`, `tile_y`, `tile_x` in four, `tile_rc`, `tile_ry`, `tile_rx` in
 * two, unrolls, padding inlined.
 * @module
 */
import { splitOptions } from "../../ir/knobs.ts";
import { fp32Only, type GpuTemplate, UNROLL_STEPS } from "./gpu_template.ts";

/**
 * `conv2d-gpu`.
 *
 * @example
 * ```ts
 * import { CONV2D_GPU } from "./conv2d_gpu.ts";
 * if (!CONV2D_GPU.workloads.includes("conv2d")) throw new Error();
 * ```
 */
export const CONV2D_GPU: GpuTemplate = {
  workloads: ["conv2d"],
  knobs: (w, math) => {
    fp32Only("conv2d-gpu", math);
    const [, C, H, W, F, KH, KW, stride, pad] = w.shape;
    const OH = Math.floor((H + 2 * pad - KH) / stride) + 1;
    const OW = Math.floor((W + 2 * pad - KW) / stride) + 1;
    return [
      { name: "tile_f", kind: "split", options: splitOptions(F, 4, 8) },
      { name: "tile_y", kind: "split", options: splitOptions(OH, 4, 8) },
      { name: "tile_x", kind: "split", options: splitOptions(OW, 4, 8) },
      { name: "tile_rc", kind: "split", options: splitOptions(C, 2, 16) },
      { name: "tile_ry", kind: "split", options: splitOptions(KH, 2) },
      { name: "tile_rx", kind: "split", options: splitOptions(KW, 2) },
      { name: "auto_unroll", kind: "annotate", options: UNROLL_STEPS },
      { name: "unroll_explicit", kind: "annotate", options: [0, 1] },
    ];
  },
  shape: (v) => {
    const [tf, ty, tx] = [v.tile_f, v.tile_y, v.tile_x] as number[][];
    return { threads: tf[2] * ty[2] * tx[2], tile: tf[3] * ty[3] * tx[3] };
  },
  apply: (sch, v) => {
    const [tf, ty, tx, trc, try_, trx] = [
      v.tile_f,
      v.tile_y,
      v.tile_x,
      v.tile_rc,
      v.tile_ry,
      v.tile_rx,
    ] as number[][];
    if (sch.stages.some((s) => s.name === "P")) sch.computeInline("P");
    const local = sch.cacheWrite("O");
    const [f0, f1, f2, f3] = sch.split("O", "f", tf);
    const [y0, y1, y2, y3] = sch.split("O", "y", ty);
    const [x0, x1, x2, x3] = sch.split("O", "x", tx);
    sch.reorder("O", ["n", f0, y0, x0, f1, y1, x1, f2, y2, x2, f3, y3, x3]);
    sch.bind("O", sch.fuse("O", ["n", f0]), "blockIdx.z");
    sch.bind("O", y0, "blockIdx.y");
    sch.bind("O", x0, "blockIdx.x");
    sch.bind("O", f2, "threadIdx.z");
    sch.bind("O", y2, "threadIdx.y");
    sch.bind("O", x2, "threadIdx.x");
    sch.computeAt(local, "O", x2);
    const [rc0, rc1] = sch.split(local, "rc", trc);
    const [ry0, ry1] = sch.split(local, "ry", try_);
    const [rx0, rx1] = sch.split(local, "rx", trx);
    sch.reorder(local, [rc0, ry0, rx0, rc1, ry1, rx1, "n", "f", "y", "x"]);
    if (v.unroll_explicit === 1 && trx[1] > 1) sch.unroll(local, rx1);
    sch.autoUnroll(local, v.auto_unroll as number);
    sch.autoUnroll("O", 64);
  },
};
