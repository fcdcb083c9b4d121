/**
 * The `conv2d-packed` template: a register tile vectorized along output
 * columns, filters packed per block, a vectorized padding copy.
 * @module
 */
import type { Schedule } from "../../ir/schedule.ts";
import type { Workload } from "../../ir/workloads.ts";
import type { Knob } from "../../ir/knobs.ts";
import { CONV_REDUCE_ORDERS, vectorizePadding } from "./_conv.ts";
import type { Template } from "./template.ts";

/**
 * Knobs of `conv2d-packed`, a direct convolution with a register tile (the
 * NCHW form of oneDNN's and TVM's `conv2d_NCHWc` micro-kernels): FR output
 * channels by YR output rows by XR output columns of accumulators (columns in
 * vectors, edges masked), the filters packed per FR block (`cache_read`
 * "global" + `transform_layout` into `[F/FR][C][KH][KW][FR]`), the order of
 * the reduction loops, an unroll of the kernel's width, the parallel loop
 * (FR blocks, or those fused with the row blocks), a software prefetch of
 * the input rows two channels ahead, a parallel, vectorized padding copy
 * and, for a strided convolution, a padded input stored in phases
 * (`deinterleave`: the stride-2 first layer's input rows become plain vector
 * loads instead of two loads and a permute).
 */
function convPackedKnobs(w: Workload): Knob[] {
  const padded = w.shape[8] > 0;
  const strided = padded && w.shape[7] > 1;
  return [
    { name: "fr", kind: "split", options: [4, 6, 8, 12, 16] },
    { name: "yr", kind: "split", options: [1, 2, 4] },
    { name: "xr", kind: "split", options: [16, 32, 48, 64] },
    { name: "pack", kind: "other", options: ["none", "W"] },
    { name: "order", kind: "reorder", options: [0, 1] },
    { name: "unroll_kw", kind: "annotate", options: [0, 1] },
    { name: "parallel", kind: "annotate", options: ["f", "fy"] },
    { name: "prefetch", kind: "annotate", options: [0, 2] },
    ...(padded ? [{ name: "pad_parallel", kind: "annotate" as const, options: [0, 1] }] : []),
    ...(strided ? [{ name: "phases", kind: "other" as const, options: [0, 1] }] : []),
  ];
}

/**
 * The loop nest of `conv2d-packed`: `n`, `f.0` (FR blocks), `y.0` (YR rows),
 * `x.0` (XR columns), where the tile `O_local` is computed (the reduction in
 * the knob's order, then FR filters and YR rows unrolled and XR columns
 * vectorized) and copied out. The padded input `P` is computed once per call
 * (its channels in parallel when `pad_parallel`); the packed filters of a
 * block once per iteration of the parallel loop.
 */
function convPackedApply(sch: Schedule, v: Record<string, unknown>): void {
  const [FR, YR, XR] = [v.fr, v.yr, v.xr] as number[];
  const local = sch.cacheWrite("O");
  let padColumns = "x";
  if (v.phases === 1) {
    // P[n][c][y][x % s][x / s]: each phase's columns written in one pass.
    const stride = sch.workload.shape[7];
    sch.deinterleave("P", 3, stride);
    const [xq, xp] = sch.split("P", "x", [null, stride]);
    sch.reorder("P", ["n", "c", "y", xp, xq]);
    padColumns = xq;
  }
  if (v.pad_parallel === 1) vectorizePadding(sch, true, padColumns);
  const wp = v.pack === "W" ? sch.cacheRead("Wt", "global", [local]) : undefined;
  const [fo, fi] = sch.split("O", "f", [null, FR]);
  const [yo, yi] = sch.split("O", "y", [null, YR]);
  const [xo, xi] = sch.split("O", "x", [null, XR]);
  sch.reorder("O", ["n", fo, yo, xo, fi, yi, xi]);
  const outer = v.parallel === "f" ? fo : sch.fuse("O", ["n", fo, yo]);
  sch.parallel("O", outer);
  sch.computeAt(local, "O", xo);
  sch.unroll("O", fi);
  sch.unroll("O", yi);
  sch.vectorize("O", xi);
  sch.reorder(local, [...CONV_REDUCE_ORDERS[v.order as number], "n", "f", "y", "x"]);
  // The input rows `prefetch` input channels ahead (rc is the channel loop).
  if ((v.prefetch as number) > 0) {
    sch.prefetch(
      local,
      sch.stages.some((s) => s.name === "P") ? "P" : "I",
      "rc",
      v.prefetch as number,
    );
  }
  sch.unroll(local, "f");
  sch.unroll(local, "y");
  if (v.unroll_kw === 1) sch.unroll(local, "rx");
  sch.vectorize(local, "x");
  if (wp) {
    // Per FR block (inside the parallel loop), or once per call when the row
    // blocks share the parallel loop.
    sch.transformLayout(wp, 0, FR);
    if (v.parallel === "f") sch.computeAt(wp, "O", outer);
  }
}

/**
 * `conv2d-packed`: {@link convPackedKnobs} applied by {@link convPackedApply}.
 *
 * @example
 * ```ts
 * import { CONV2D_PACKED } from "./conv2d_packed.ts";
 * if (!CONV2D_PACKED.workloads.includes("conv2d")) throw new Error();
 * ```
 */
export const CONV2D_PACKED: Template = {
  workloads: ["conv2d"],
  knobs: convPackedKnobs,
  apply: convPackedApply,
  // A tile of more accumulators than AVX-512 has registers (32) lives in
  // memory, and gcc needs minutes for its unrolled body.
  isValid: (v) => (v.fr as number) * (v.yr as number) * Math.ceil((v.xr as number) / 16) <= 32,
};
