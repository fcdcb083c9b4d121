/**
 * The `depthwise-blocked` template: the depthwise convolution on channel
 * blocks (TVM's `depthwise_conv2d_NCHWc` schedule).
 * @module
 */
import { pooledExtent } from "../../ir/nn.ts";
import type { Schedule } from "../../ir/schedule.ts";
import type { Workload } from "../../ir/workloads.ts";
import type { Knob } from "../../ir/knobs.ts";
import { vectorizeBlockedPadding } from "./_conv.ts";
import type { Template } from "./template.ts";

/**
 * Knobs of `depthwise-blocked`, the depthwise convolution on channel blocks
 * (`depthwise_conv2d_nchwc`, TVM's `depthwise_conv2d_NCHWc` schedule): a
 * register tile of XR output columns by the block's B channels (vectors),
 * each step one vector of filter taps and one input vector per column; rows
 * of blocks in parallel (`c`: the channel blocks, `cy`: blocks x rows), the
 * kernel's width unrolled with `unroll_kw`. A padded layer reads its input in
 * place with `pad_at` `inline` (a tap in the padding is skipped, one test per
 * vector, as oneDNN's depthwise kernels do) or copies it padded once per call
 * (`root`; in parallel with `pad_parallel`): the copy, as large as the input,
 * cost more than the convolution (0.43 of the in-place kernel's speed on
 * MobileNet-v2's 144x56x56 3x3/2 layer, two threads).
 */
function depthwiseBlockedKnobs(w: Workload): Knob[] {
  return [
    { name: "xr", kind: "split", options: [1, 2, 4, 7, 8, 14] },
    { name: "parallel", kind: "annotate", options: ["cy", "c"] },
    { name: "unroll_kw", kind: "annotate", options: [1, 0] },
    ...(w.shape[7] > 0
      ? [
        { name: "pad_parallel", kind: "annotate" as const, options: [1, 0] },
        { name: "pad_at", kind: "annotate" as const, options: ["inline", "root"] },
      ]
      : []),
  ];
}

/**
 * The loop nest of `depthwise-blocked`: `n`, `c`, `y`, `x.0` (the parallel
 * loop `n` x `c`, or x `y`), the tile `O_local` (`[XR][B]`) computed at
 * `x.0` reducing over `ry`, `rx` with XR columns unrolled and the B channels
 * vectorized (the filters packed with their B channels innermost); the
 * padding inlined into the tile's reads, or the padded input (blocked, a
 * vector per pixel) copied once per call, its channel blocks in parallel with
 * `pad_parallel`.
 */
function depthwiseBlockedApply(sch: Schedule, v: Record<string, unknown>): void {
  const local = sch.cacheWrite("O");
  // Filter taps packed [C/B][1][KH][KW][B] once ahead of the timed calls: a
  // step's B taps are one vector.
  const wp = sch.cacheRead("Wt", "global", [local]);
  sch.transformLayout(wp, 0, sch.workload.shape[8]);
  if (sch.stages.some((s) => s.name === "P")) {
    if (v.pad_at === "inline") sch.computeInline("P");
    else vectorizeBlockedPadding(sch, v.pad_parallel === 1);
  }
  const [xo, xi] = sch.split("O", "x", [null, v.xr as number]);
  sch.reorder("O", ["n", "c", "y", xo, xi, "b"]);
  const par = sch.fuse("O", v.parallel === "c" ? ["n", "c"] : ["n", "c", "y"]);
  sch.parallel("O", par);
  sch.computeAt(local, "O", xo);
  sch.unroll("O", xi);
  sch.vectorize("O", "b");
  sch.reorder(local, ["ry", "rx", "n", "c", "y", "x", "b"]);
  if (v.unroll_kw === 1) sch.unroll(local, "rx");
  sch.unroll(local, "x");
  sch.vectorize(local, "b");
}

/**
 * `depthwise-blocked`: the default template of `depthwise_conv2d_nchwc`.
 *
 * @example
 * ```ts
 * import { DEPTHWISE_BLOCKED } from "./depthwise_blocked.ts";
 * if (!DEPTHWISE_BLOCKED.workloads.includes("depthwise_conv2d_nchwc")) throw new Error();
 * ```
 */
export const DEPTHWISE_BLOCKED: Template = {
  workloads: ["depthwise_conv2d_nchwc"],
  knobs: depthwiseBlockedKnobs,
  apply: depthwiseBlockedApply,
  // The accumulators (XR columns x B / lanes vectors), a step's filter
  // vectors and an input vector fit the target's registers.
  isValid: (v, w, target) => {
    const [, , , W, , KW, stride, pad, B] = w.shape;
    const vectors = Math.ceil(B / target.lanes), OW = pooledExtent(W, KW, stride, pad);
    // The padding copy's knob means nothing without the copy.
    if (v.pad_at === "inline" && v.pad_parallel === 0) return false;
    return Math.min(v.xr as number, OW) * vectors + 2 * vectors <= target.registers;
  },
};
