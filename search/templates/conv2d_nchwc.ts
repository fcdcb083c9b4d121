/**
 * The `conv2d-nchwc` template: vectorized along output channels, filters
 * rewritten once into channel blocks (oneDNN's and TVM's `conv2d_NCHWc`
 * micro-kernel on NCHW tensors).
 * @module
 */
import type { Schedule } from "../../ir/schedule.ts";
import type { Workload } from "../../ir/workloads.ts";
import type { Knob } from "../../ir/knobs.ts";
import { CONV_REDUCE_ORDERS, vectorizePadding } from "./_conv.ts";
import { channelTileBody, channelTileFits, channelTileLoops } from "./_channel_tile.ts";
import type { Template } from "./template.ts";

/**
 * Knobs of `conv2d-nchwc`, the direct convolution of oneDNN's and TVM's
 * `conv2d_NCHWc` micro-kernel on NCHW tensors: a register tile of FR output
 * channels (vectors) by YR rows by XR columns (unrolled), each step one
 * vector load of packed filters and a broadcast input value per output
 * column. Filters live in the `[F/FR][C][KH][KW][FR]` layout, rewritten once
 * ahead of the timed calls (the weights are layout-free); the tile is stored
 * channel-innermost (`transform_layout` of the `cache_write` tile) and copied
 * out (16 x 16 blocks transposed in registers, stored along the rows; a copy
 * with each channel's row read back by scalar loads was half as fast on the
 * 1x1 layers of ResNet-18 and left out). Unlike
 * `conv2d-packed`, whose vectors run along output columns, a 7- or 14-wide
 * output row fills its vectors.
 */
function convNCHWcKnobs(w: Workload): Knob[] {
  const padded = w.shape[8] > 0;
  return [
    { name: "fr", kind: "split", options: [16, 32, 48, 64] },
    { name: "yr", kind: "split", options: [1, 2, 4, 7] },
    { name: "xr", kind: "split", options: [1, 2, 4, 7, 8, 14, 16, 28] },
    { name: "order", kind: "reorder", options: [0, 1] },
    { name: "unroll_kw", kind: "annotate", options: [0, 1] },
    { name: "parallel", kind: "annotate", options: ["f", "fy"] },
    ...(padded ? [{ name: "pad_parallel", kind: "annotate" as const, options: [0, 1] }] : []),
  ];
}

/**
 * The loop nest of `conv2d-nchwc`: `n`, `f.0` (FR blocks), `y.0`, `x.0`, where
 * the tile `O_local` (`[YR][XR][FR]`) is computed: the reduction in the knob's
 * order, then YR rows and XR columns unrolled and FR channels vectorized.
 * The parallel loop is `n` x `f.0` (`f`) or `n` x `f.0` x `y.0` (`fy`).
 */
function convNCHWcApply(sch: Schedule, v: Record<string, unknown>): void {
  const FR = v.fr as number;
  const local = sch.cacheWrite("O");
  const wp = sch.cacheRead("Wt", "global", [local]);
  sch.transformLayout(wp, 0, FR);
  sch.transformLayout(local, 1, FR);
  if (sch.stages.some((s) => s.name === "P")) vectorizePadding(sch, v.pad_parallel === 1, "x");
  channelTileLoops(sch, local, v);
  sch.reorder(local, [...CONV_REDUCE_ORDERS[v.order as number], "n", "y", "x", "f"]);
  channelTileBody(sch, local, v);
}

/**
 * `conv2d-nchwc`: {@link convNCHWcKnobs} applied by {@link convNCHWcApply}.
 *
 * @example
 * ```ts
 * import { CONV2D_NCHWC } from "./conv2d_nchwc.ts";
 * if (!CONV2D_NCHWC.workloads.includes("conv2d")) throw new Error();
 * ```
 */
export const CONV2D_NCHWC: Template = {
  workloads: ["conv2d"],
  knobs: convNCHWcKnobs,
  apply: convNCHWcApply,
  isValid: channelTileFits,
};
