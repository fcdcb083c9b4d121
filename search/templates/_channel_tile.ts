/**
 * The channel-vector register tile that `conv2d-nchwc`, `conv2d-nchwxc` and
 * `conv2d-blocked` share: its loops, its body and its register rule.
 * @module
 */
import type { Schedule } from "../../ir/schedule.ts";
import type { Workload } from "../../ir/workloads.ts";
import type { RegisterFile } from "../../ir/target_cpu.ts";
import { outHeight, outWidth } from "./template.ts";

/**
 * The output loops of the channel-vector tile (`conv2d-nchwc`,
 * `conv2d-nchwxc`): `n`, `f.0`, `y.0`, `x.0`, then YR rows and XR columns
 * unrolled and FR channels vectorized; the parallel loop `n` x `f.0` (`f`)
 * or `n` x `f.0` x `y.0` (`fy`); the tile `local` computed at `x.0`. With
 * `y` (`conv2d-nchwxc` only) the outer loops are `n` x `y.0` (parallel),
 * `x.0`, `f.0`, the tile at `f.0`: a tile's input is read once for every
 * channel block instead of once per block (a 1x1 stride-2 layer re-read its
 * whole input for each of `F/FR` blocks).
 */
export function channelTileLoops(sch: Schedule, local: string, v: Record<string, unknown>): void {
  // A blocked output (`conv2d_nchwc`) has its channel blocks as axes already.
  const [blocks, fi] = sch.workload.name === "conv2d_nchwc"
    ? ["fo", "fi"]
    : sch.split("O", "f", [null, v.fr as number]);
  // `oc_blocks` output blocks in one tile (`conv2d-blocked`): `fo.1` joins
  // the tile's loops.
  const ocBlocks = outputBlocksPerTile(v);
  const split = ocBlocks > 1 ? sch.split("O", blocks, [null, ocBlocks]) : undefined;
  const [fo, foTile] = split ? [split[0], [split[1]]] : [blocks, []];
  // With `flat` the positions are one axis `yx` (see convNCHWxcKnobs), tiled by XR.
  const [yo, yi] = v.flat === 1 ? [] : sch.split("O", "y", [null, v.yr as number]);
  const [xo, xi] = sch.split("O", v.flat === 1 ? "yx" : "x", [null, v.xr as number]);
  const outer = yo === undefined ? [xo] : [yo, xo];
  const inner = [...foTile, ...(yi === undefined ? [xi] : [yi, xi])];
  if (v.parallel === "y") {
    sch.reorder("O", ["n", ...outer, fo, ...inner, fi]);
    sch.parallel("O", sch.fuse("O", ["n", outer[0]]));
    sch.computeAt(local, "O", fo);
  } else {
    sch.reorder("O", ["n", fo, ...outer, ...inner, fi]);
    const par = sch.fuse("O", v.parallel === "f" ? ["n", fo] : ["n", fo, outer[0]]);
    sch.parallel("O", par);
    // Flat positions in parallel (`fy`): the tile's loop is the parallel one.
    sch.computeAt(local, "O", v.parallel === "fy" && yo === undefined ? par : xo);
  }
  for (const l of inner) sch.unroll("O", l);
  sch.vectorize("O", fi);
}

/** Output blocks in one tile: `oc_blocks` of `conv2d-blocked`, 1 elsewhere. */
export function outputBlocksPerTile(v: Record<string, unknown>): number {
  return (v.oc_blocks as number | undefined) ?? 1;
}

/**
 * The tile's own loops after its reduction order is set: the kernel's width
 * unrolled when `unroll_kw`, rows and columns unrolled, channels vectorized.
 */
export function channelTileBody(sch: Schedule, local: string, v: Record<string, unknown>): void {
  if (v.unroll_kw === 1) sch.unroll(local, "rx");
  for (const l of v.flat === 1 ? ["yx"] : ["y", "x"]) sch.unroll(local, l);
  sch.vectorize(local, sch.workload.name === "conv2d_nchwc" ? "fi" : "f");
}

/**
 * The register rule of the channel-vector tiles: the accumulators (YR x XR
 * positions, each FR / lanes vectors; positions past the output's edge are
 * not computed) and the step's broadcast fit the target's vector registers,
 * with AVX-512 the FR/16 filter vectors of a step too (a 64 x 7 tile, 28 +
 * 4 + 1, spilled and ran at 0.85 of the 32 x 7 one on the 512 x 7 x 7
 * layer). With AVX2's 16 registers a step's filter vectors may be FMA memory
 * operands instead: on the 1x1 stride-2 128x28x28 layer the 16 x 7 tile
 * (14 accumulators) beat 12-accumulator tiles, while on the 3x3 128x28x28
 * layer tiles of 16 accumulators ran at 0.62-0.67 of a 16 x (2 x 3) one and
 * a 16 x 14 one at 0.55, one thread (README, "The register file").
 * `vectors` is a position's accumulator vectors (default FR / lanes).
 */
export function channelTileFits(
  v: Record<string, unknown>,
  w: Workload,
  target: RegisterFile,
  vectors = Math.ceil(Math.min(v.fr as number, w.shape[4]) / target.lanes),
): boolean {
  if (v.flat === 1 && v.yr !== 1) return false;
  const positions = v.flat === 1
    ? Math.min(v.xr as number, outHeight(w) * outWidth(w))
    : Math.min(v.yr as number, outHeight(w)) * Math.min(v.xr as number, outWidth(w));
  const filters = target.lanes === 16 ? vectors : 0;
  return positions * vectors + filters + 1 <= target.registers;
}
