/**
 * The `conv2d-nchwxc` template: `conv2d-nchwc`'s tile reading a
 * channel-blocked copy of its input (TVM's `NCHW[x]c`). `conv2d-blocked`
 * starts from its knobs.
 * @module
 */
import type { Schedule } from "../../ir/schedule.ts";
import type { Workload } from "../../ir/workloads.ts";
import type { Knob } from "../../ir/knobs.ts";
import { CONV_REDUCE_ORDERS, vectorizePadding } from "./_conv.ts";
import { channelTileBody, channelTileFits, channelTileLoops } from "./_channel_tile.ts";
import type { Template } from "./template.ts";

/**
 * Knobs of `conv2d-nchwxc`: the register tile of `conv2d-nchwc` reading a
 * channel-blocked copy of its input, `[C/CB][H][W][CB]` (TVM's `NCHW[x]c`
 * data layout, oneDNN's `nChw8c`), CB = `ic_bn` input channels innermost in
 * the reduction (`rc.0`, `ry`, `rx`, `rc.1`). A step's broadcasts are
 * neighbours in memory and the filters, packed `[C/CB][F/FR][KH][KW][CB][FR]`,
 * are read in order; without the block each step of a channel-innermost loop
 * reads another plane of the NCHW input. The copy is the padding copy (its
 * CB channels a vector), or for an unpadded convolution a copy of the input
 * at the root. `ic_bn` 0 reads the NCHW input as `conv2d-nchwc` does (its
 * reduction order 0). Columns of 3 and 6 give AVX2's 16 registers tiles of
 * 12 accumulators. `parallel` adds `y` to `conv2d-nchwc`'s `f` and `fy`:
 * rows in parallel, the channel blocks innermost (see `channelTileLoops`).
 * `flat` 1 merges the output's rows and columns into one axis of positions
 * (`fuse_axes`) tiled by XR (YR must be 1), as oneDNN's 1x1 convolutions
 * tile their spatial dimension: a 14 x 14 output in tiles of 6 has one edge
 * tile instead of one per row, and a tile of 6 on a 7 x 7 output spans rows.
 * On ResNet-18's 1x1 stride-2 128x28x28 layer the flat 16 x 6 tile with rows
 * in parallel ran 1.26x faster than the 16 x 7 row tile tuning had kept, two
 * threads (README, "Flat positions").
 */
export function convNCHWxcKnobs(w: Workload): Knob[] {
  const C = w.shape[1];
  const blocks = [4, 8, 16].filter((b) => C % b === 0 && b < C);
  return [
    { name: "fr", kind: "split", options: [16, 32, 48, 64] },
    { name: "yr", kind: "split", options: [1, 2, 4, 7] },
    { name: "xr", kind: "split", options: [1, 2, 3, 4, 6, 7, 8, 14, 16, 28] },
    { name: "ic_bn", kind: "split", options: [0, ...(blocks.length > 0 ? blocks : [C])] },
    { name: "unroll_kw", kind: "annotate", options: [0, 1] },
    { name: "parallel", kind: "annotate", options: ["f", "fy", "y"] },
    ...(w.shape[8] > 0
      ? [{ name: "pad_parallel", kind: "annotate" as const, options: [0, 1] }]
      : []),
    { name: "flat", kind: "other", options: [0, 1] },
  ];
}

/**
 * The loop nest of `conv2d-nchwxc`: `conv2d-nchwc`'s, with the input read
 * from a copy blocked by `ic_bn` channels (see {@link convNCHWxcKnobs}); the
 * copy's loops are `n`, `c.0`, `y`, `x`, `c.1`, the last a vector of CB
 * channels, `c.0` in parallel when `pad_parallel` (always for the copy of an
 * unpadded input).
 */
function convNCHWxcApply(sch: Schedule, v: Record<string, unknown>): void {
  const [FR, CB] = [v.fr, v.ic_bn] as number[];
  if (v.flat === 1) sch.fuseAxes("O", ["y", "x"]);
  const local = sch.cacheWrite("O");
  const wp = sch.cacheRead("Wt", "global", [local]);
  if (CB > 0) sch.transformLayout(wp, 1, CB);
  sch.transformLayout(wp, 0, FR);
  sch.transformLayout(local, 1, FR);
  const padded = sch.stages.some((s) => s.name === "P");
  if (CB > 0) {
    const copy = padded ? "P" : sch.cacheRead("I", "global", [local]);
    sch.transformLayout(copy, 1, CB);
    const [n, c, y, x] = sch.stage(copy).leaves.map((l) => l.name);
    const [co, ci] = sch.split(copy, c, [null, CB]);
    sch.reorder(copy, [n, co, y, x, ci]);
    if (!padded || v.pad_parallel === 1) sch.parallel(copy, co);
    sch.vectorize(copy, ci);
  } else if (padded) vectorizePadding(sch, v.pad_parallel === 1, "x");
  channelTileLoops(sch, local, v);
  const positions = v.flat === 1 ? ["yx"] : ["y", "x"];
  if (CB > 0) {
    const [co, ci] = sch.split(local, "rc", [null, CB]);
    sch.reorder(local, [co, "ry", "rx", ci, "n", ...positions, "f"]);
  } else sch.reorder(local, [...CONV_REDUCE_ORDERS[0], "n", ...positions, "f"]);
  channelTileBody(sch, local, v);
}

/**
 * `conv2d-nchwxc`: {@link convNCHWxcKnobs} applied by {@link convNCHWxcApply}.
 *
 * @example
 * ```ts
 * import { CONV2D_NCHWXC } from "./conv2d_nchwxc.ts";
 * if (!CONV2D_NCHWXC.workloads.includes("conv2d")) throw new Error();
 * ```
 */
export const CONV2D_NCHWXC: Template = {
  workloads: ["conv2d"],
  knobs: convNCHWxcKnobs,
  apply: convNCHWxcApply,
  isValid: channelTileFits,
};
