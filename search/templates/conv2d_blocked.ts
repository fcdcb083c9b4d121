/**
 * The `conv2d-blocked` template: the tile of `conv2d-nchwxc` on the blocked
 * workload `conv2d_nchwc`, with output blocks per tile, the padding read in
 * place, and a heuristic point.
 * @module
 */
import type { Schedule } from "../../ir/schedule.ts";
import type { Workload } from "../../ir/workloads.ts";
import type { RegisterFile } from "../../ir/target_cpu.ts";
import type { Knob } from "../../ir/knobs.ts";
import { vectorizeBlockedPadding, vectorizePadding } from "./_conv.ts";
import {
  channelTileBody,
  channelTileFits,
  channelTileLoops,
  outputBlocksPerTile,
} from "./_channel_tile.ts";
import { convNCHWxcKnobs } from "./conv2d_nchwxc.ts";
import { outHeight, outWidth, type Template } from "./template.ts";

/**
 * Knobs of `conv2d-blocked`, the tile of `conv2d-nchwxc` on the blocked
 * workload `conv2d_nchwc` (input and output in channel blocks, see
 * `conv2dNCHWc`): FR is the output block FB, a tile's accumulators are
 * stored as they are (a vector per position and FB / lanes) and its input
 * broadcasts read the caller's blocks: no copy into blocks, none out of them
 * (oneDNN's timed `nChw8c` kernels copy neither). Rows and columns, or flat
 * positions, as in `conv2d-nchwxc`; a padded input still has its (blocked,
 * vector) padding copy, an image's (a block of 1) always in parallel over
 * its rows (no `pad_parallel`). On such an input the knob
 * `predictive_commoning` 0 turns gcc's `-fpredictive-commoning` off for the
 * kernel (a `gcc.*` pragma, see `Kernel.gccOptions`), as OpenTuner tunes
 * gcc's flags: there the reduction's innermost loop is the kernel's width,
 * and gcc keeps the broadcasts that neighbouring columns share in registers
 * across its iterations, which helps a tile of 8 accumulators and spills one
 * of 12. On ResNet-18's 7x7/2 first layer, two threads, the 16 x 6 tile ran
 * at 0.67-0.72 of the 16 x 4 one with it and 1.085-1.13 without it (README,
 * "The first layer"); on blocked inputs it made no difference.
 *
 * `oc_blocks` (1 to 4, those that divide the output's blocks) puts that
 * many output blocks in one tile, oneDNN's `nb_oc_blocking`: a step's
 * broadcast of one input float serves as many filter vectors, as in
 * oneDNN's `brgconv` kernels with their 32 or 64 output channels a tile.
 * With AVX-512 a block of 16 is one vector, so a tile of one block loads a
 * broadcast per multiply-add; the register rule counts every block's
 * accumulators and filter vectors.
 *
 * `pad_at` (a padded input in blocks) is where the padding is made: `root`,
 * the padding copy, or `inline`, the input read in place, each tap that
 * falls in the padding skipped (the guards of the copy's reads, which the
 * copy's zeros no longer back), as oneDNN copies nothing. The copy was 5-8%
 * of the time of ResNet-18's 3x3/2 128x28x28 layer, and reading in place,
 * hand-edited, 1.02-1.07x faster over four runs of 30 rounds (README,
 * "Output blocks per tile").
 */
function convBlockedKnobs(w: Workload): Knob[] {
  const image = w.shape[9] === 1;
  // An image's padding copy always runs in parallel over its rows (below).
  const own = image ? ["fr", "ic_bn", "pad_parallel"] : ["fr", "ic_bn"];
  const outBlocks = w.shape[4] / w.shape[10];
  const ocBlocks = [1, 2, 3, 4].filter((b) => outBlocks % b === 0);
  return [
    ...convNCHWxcKnobs(w).filter((k) => !own.includes(k.name)),
    // Only an NCHW input's innermost reduction loop (the kernel's width) has
    // loads shared between iterations; elsewhere the knob made no difference.
    ...(image
      ? [{ name: "predictive_commoning", kind: "annotate" as const, options: [1, 0] }]
      : []),
    ...(ocBlocks.length > 1
      ? [{ name: "oc_blocks", kind: "split" as const, options: ocBlocks }]
      : []),
    // A padded blocked input read in place, its padded taps skipped.
    ...(w.shape[8] > 0 && !image
      ? [{ name: "pad_at", kind: "annotate" as const, options: ["root", "inline"] }]
      : []),
  ];
}

/**
 * The loop nest of `conv2d-blocked`: `n`, `fo`, `y.0`, `x.0` (or `n`, `y.0`,
 * `x.0`, `fo` with `parallel` `y`), the tile computed there reducing over
 * `rco`, `ry`, `rx`, `rci`; the filters packed `[F/FB][C/CB][KH][KW][CB][FB]`
 * once ahead of the timed calls.
 */
function convBlockedApply(sch: Schedule, v: Record<string, unknown>): void {
  const [CB, FB] = [sch.workload.shape[9], sch.workload.shape[10]];
  if (v.flat === 1) sch.fuseAxes("O", ["y", "x"]);
  const local = sch.cacheWrite("O");
  const wp = sch.cacheRead("Wt", "global", [local]);
  sch.transformLayout(wp, 1, CB);
  sch.transformLayout(wp, 0, FB);
  if (v.pad_at === "inline") sch.computeInline("P");
  else if (sch.stages.some((s) => s.name === "P")) {
    // A block of 4 or more channels is the copy's vector; an NCHW input
    // (a block of 1: the image of a first layer) is copied along its rows.
    if (CB === 1) {
      // In parallel over its rows: 3 channels split unevenly over the
      // threads, and a serial copy cost the 7x7/2 first layer of ResNet-18
      // 4% of its time on two threads (2% in parallel).
      sch.reorder("P", ["n", "c", "y", "b", "x"]);
      sch.parallel("P", sch.fuse("P", ["c", "y"]));
      vectorizePadding(sch, false, "x");
    } else vectorizeBlockedPadding(sch, v.pad_parallel === 1);
  }
  channelTileLoops(sch, local, v);
  const positions = v.flat === 1 ? ["yx"] : ["y", "x"];
  // Several output blocks (`oc_blocks`): a step's broadcast of one input
  // serves each block's filter vector in turn.
  const several = outputBlocksPerTile(v) > 1;
  const tile = several ? [...positions, "fo", "fi"] : ["fo", ...positions, "fi"];
  sch.reorder(local, ["rco", "ry", "rx", "rci", "n", ...tile]);
  channelTileBody(sch, local, v);
  if (several) sch.unroll(local, "fo");
  if (v.predictive_commoning === 0) sch.annotate("O", "gcc.predictive_commoning", 0);
}

/**
 * The heuristic point of `conv2d-blocked` on a layer with blocked input:
 * the padding (if any) read in place, a tile of 2 output
 * blocks covering the output's row, else half of it, else 1 block covering
 * the row, the first whose accumulators, filter vectors and broadcast fit
 * the registers (oneDNN's `ur_w` by `nb_oc_blocking`), as many rows of it as
 * fit, else 14 columns by 2 blocks;
 * blocks in parallel where there are at least 4 tiles of them, else rows.
 * On ResNet-18's 3x3 layers, two threads (`bench/tiles.ts`), such tiles ran
 * 1.04-1.25x faster than a 2,000-trial session's picks (README, "The padding
 * read in place"); on its 7-wide outputs two rows of 7 x 2 blocks ran
 * 1.08-1.11x faster than one (README, "Rows in the heuristic tile").
 *
 * Where a row of 2 blocks does not fit, half a row of 2 blocks comes before
 * a row of 1: a step's broadcast then serves two filter vectors instead of
 * one, as oneDNN's kernels block 2 to 4 output blocks by fewer positions.
 * Unpadded layers (1x1 projections) have the same rule, without the padding.
 * On ResNet-18's 28-wide outputs, two threads, on an Intel Xeon model 167
 * (`bench/tiles.ts`), half a row by 2 blocks ran 1.05-1.14x faster than a
 * row by 1 on the 3x3, 3x3/2 and 1x1/2 layers; against oneDNN the point
 * alone went from 0.88-0.91 to 0.95-1.05 (bench/results/vendor_speed.md,
 * "Half a row of two blocks").
 *
 * Where not even 14 columns of 2 blocks fit (AVX2's 16 registers, a block of
 * 16 two vectors of 8), the most columns that fit: of 1 block for a kernel
 * wider than 1 (3 x 3: 7 columns, 14 accumulators), of 2 for a 1x1 (3
 * columns, 12). On an AMD EPYC of family 23 (`bench/tiles.ts`), 1 block by
 * 6 or 7 columns ran 1.02-1.10x as fast as 2 by 3 on the 28- and 14-wide 3x3
 * layers, and 2 by 3 1.04-1.13x as fast as 1 by 6 or 7 on the 1x1/2 ones
 * (bench/results/vendor_speed.md, "AVX2: an AMD EPYC of family 23").
 */
function convBlockedHeuristic(
  w: Workload,
  target: RegisterFile,
): Record<string, unknown> | undefined {
  const [, , , , F, , KW, , , CB, FB] = w.shape;
  if (CB === 1) return undefined;
  const blocks = F / FB, vectors = Math.ceil(FB / target.lanes);
  const knobs = convNCHWxcKnobs(w);
  const options = (name: string) => knobs.find((k) => k.name === name)!.options as number[];
  const row = options("xr").find((c) => c >= outWidth(w));
  // Half a row of 2 blocks before a row of 1 (see above).
  const half = options("xr").find((c) => c >= outWidth(w) / 2);
  // Its accumulators, filter vectors and broadcast within the registers.
  const fits = (v: Record<string, unknown>) =>
    channelTileFits(v, w, target, outputBlocksPerTile(v) * vectors);
  // Blocks in parallel where there are at least 4 tiles of them, else rows.
  const parallelLoop = (oc: number) => blocks / oc >= 4 ? "f" : "y";
  const tile = (xr: number, oc: number, parallel: string, unroll = 1) => ({
    yr: 1,
    xr,
    unroll_kw: unroll,
    parallel,
    pad_parallel: 1,
    flat: 0,
    oc_blocks: oc,
    pad_at: "inline",
  });
  const rows = options("yr").filter((r) => r <= outHeight(w)).reverse();
  for (const oc of [2, 1].filter((b) => blocks % b === 0)) {
    if (row === undefined) break;
    // As many rows as the registers hold: a 7-wide row of 2 blocks fills 14 of
    // 32, two rows 28, each filter vector then serving twice the columns.
    for (const xr of oc === 2 && half !== undefined && half !== row ? [row, half] : [row]) {
      for (const yr of rows) {
        const v = { ...tile(xr, oc, parallelLoop(oc)), yr };
        if (fits(v)) return v;
      }
    }
  }
  const wide = tile(14, blocks % 2 === 0 ? 2 : 1, "y", 0);
  if (fits(wide)) return wide;
  // Fewer registers for the blocks' vectors (AVX2: 16, a block of 16 two
  // vectors): the most columns of a row that fit, of 1 block where the
  // kernel has several taps along a row (neighbouring taps share the
  // broadcasts of a wider row), of 2 blocks for a 1x1 kernel (nothing to
  // share, so a broadcast serves more filter vectors instead).
  const columns = options("xr").filter((c) => c <= outWidth(w)).reverse();
  const order = KW > 1 ? [1, 2] : [2, 1];
  for (const oc of order.filter((b) => blocks % b === 0)) {
    for (const xr of columns) {
      const v = tile(xr, oc, parallelLoop(oc));
      if (fits(v)) return v;
    }
  }
  return undefined;
}

/**
 * `conv2d-blocked`: the default template of `conv2d_nchwc`.
 *
 * @example
 * ```ts
 * import { CONV2D_BLOCKED } from "./conv2d_blocked.ts";
 * if (!CONV2D_BLOCKED.workloads.includes("conv2d_nchwc")) throw new Error();
 * ```
 */
export const CONV2D_BLOCKED: Template = {
  workloads: ["conv2d_nchwc"],
  knobs: convBlockedKnobs,
  apply: convBlockedApply,
  heuristic: convBlockedHeuristic,
  // Each of the tile's output blocks is its own vectors (a block of 8 is
  // one vector of 8 even where vectors hold 16).
  isValid: (v, w, target) =>
    // The padding copy's knob means nothing without the copy.
    !(v.pad_at === "inline" && v.pad_parallel === 0) &&
    channelTileFits(
      v,
      w,
      target,
      outputBlocksPerTile(v) * Math.ceil(w.shape[10] / target.lanes),
    ),
};
