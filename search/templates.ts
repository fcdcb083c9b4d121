/**
 * Knob templates (AutoTVM style): a schedule written once as a function of
 * named knobs. The knob space is finite and indexable; each point becomes a
 * concrete schedule whose trace holds no sampling instruction, only
 * primitives with the knob values as arguments.
 *
 * Templates: `matmul` (tiles of i, j, k, loop order, cache write, vectorize,
 * unroll, parallel), `matmul-packed` (register tile MR x NR, cache blocks
 * MC x NC x KC, packed A and B panels, parallel row blocks), `dense` (the same with bias + ReLU fused at the tile),
 * `conv2d` in the four-knob form of the RL study (tile_ic, tile_oc, tile_ow,
 * unroll_kw; AutoTVM's x86 conv2d), `conv2d-rich` (adds tile_oh, loop
 * order, a register tile and padding placement), `conv2d-packed` (a register
 * tile vectorized along output columns), `conv2d-nchwc` (vectorized along
 * output channels, filters rewritten once into channel blocks) and
 * `conv2d-nchwxc` (the same reading a channel-blocked copy of its input).
 *
 * @example
 * ```ts
 * import { templateSpace } from "./templates.ts";
 * import { createWorkload } from "../ir/workloads.ts";
 * const t = templateSpace("conv2d", createWorkload("conv2d", [1, 64, 56, 56, 64, 3, 3, 1, 1]));
 * if (t.space.knobs.length !== 4) throw new Error();
 * const c = t.candidateOf(t.space.point(0));
 * if (!c.trace) throw new Error();
 * ```
 * @module
 */
import { pooledExtent } from "../ir/nn.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { traceOf } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";
import { type RegisterFile, registerFile } from "../measure/cpu.ts";
import {
  type Knob,
  KnobSpace,
  type Point,
  pointOfValues,
  splitOptions,
  withDefaults,
} from "./knobs.ts";
import { packPanelsA, packPanelsB } from "./packing.ts";
import type { Candidate } from "./strategy.ts";

/** A knob space whose points are schedules of a workload. */
export interface TemplateSpace {
  /** Template name, e.g. `"matmul"`. */
  name: string;
  /** The workload it schedules. */
  workload: Workload;
  /** Its knob space. */
  space: KnobSpace;
  /** The candidate (knobs and trace) of a point. */
  candidateOf(point: Point): Candidate;
  /**
   * The template's heuristic point for this workload, when it has one and
   * the point is in the space: a hand-written rule's tile (AutoTVM's
   * fallback configuration, a Triton autotuner config), which a network's
   * tasks try as their second seed.
   */
  heuristic?(): Candidate | undefined;
}

type Apply = (sch: Schedule, v: Record<string, unknown>) => void;

interface Template {
  /** Workload names the template schedules. */
  workloads: string[];
  knobs(w: Workload): Knob[];
  apply: Apply;
  /**
   * Points outside the space (knob values by name), like AutoTVM's template
   * restrictions; register rules count the target's register file.
   */
  isValid?: (values: Record<string, unknown>, w: Workload, target: RegisterFile) => boolean;
  /** A hand-written rule's point (knob values by name; those left out take their first option). */
  heuristic?: (w: Workload, target: RegisterFile) => Record<string, unknown> | undefined;
}

const UNROLL_STEPS = [0, 16, 64];

/** Orders of the loops inside the parallel tile (AutoTVM "re" knob), for matmul-like stages. */
const MATMUL_ORDERS = [
  ["k.0", "i.1", "j.1", "k.1", "i.2", "j.2"],
  ["i.1", "j.1", "k.0", "k.1", "i.2", "j.2"],
  ["i.1", "k.0", "j.1", "k.1", "i.2", "j.2"],
];

/** Tiles i (rows) and j (columns) in three levels and k in two. */
function matmulKnobs(w: Workload): Knob[] {
  const [M, N, K] = w.shape;
  return [
    { name: "tile_i", kind: "split", options: splitOptions(M, 3, 16) },
    { name: "tile_j", kind: "split", options: splitOptions(N, 3, 64) },
    { name: "tile_k", kind: "split", options: splitOptions(K, 2) },
    { name: "order", kind: "reorder", options: MATMUL_ORDERS.map((_, i) => i) },
    { name: "cache_write", kind: "other", options: [0, 1] },
    { name: "vectorize", kind: "annotate", options: [0, 1] },
    { name: "unroll", kind: "annotate", options: UNROLL_STEPS },
    { name: "parallel", kind: "annotate", options: [0, 1] },
  ];
}

/**
 * Schedules a matmul-like reduction stage `red` (axes i, j, reduction k),
 * optionally computed into a local tile of `out` (its cache or its fused
 * element-wise consumer).
 */
function matmulApply(red: string, out?: string): Apply {
  return (sch, v) => {
    const [ti, tj, tk] = [v.tile_i, v.tile_j, v.tile_k] as number[][];
    if (v.cache_write === 1 || out) {
      const inner = v.cache_write === 1 && !out ? sch.cacheWrite(red) : red;
      const outer = out ?? red;
      const [i0, i1, i2] = sch.split(outer, "i", [ti[0], ti[1], ti[2]]);
      const [j0, j1, j2] = sch.split(outer, "j", [tj[0], tj[1], tj[2]]);
      sch.reorder(outer, [i0, j0, i1, j1, i2, j2]);
      if (v.parallel === 1) sch.parallel(outer, sch.fuse(outer, [i0, j0]));
      sch.computeAt(inner, outer, j1);
      if (v.vectorize === 1) sch.vectorize(outer, j2);
      const [k0, k1] = sch.split(inner, "k", [tk[0], tk[1]]);
      sch.reorder(inner, [k0, k1, "i", "j"]);
      if (v.vectorize === 1) sch.vectorize(inner, "j");
      sch.autoUnroll(inner, v.unroll as number);
      return;
    }
    const [i0, i1, i2] = sch.split(red, "i", [ti[0], ti[1], ti[2]]);
    const [j0, j1, j2] = sch.split(red, "j", [tj[0], tj[1], tj[2]]);
    const [k0, k1] = sch.split(red, "k", [tk[0], tk[1]]);
    const inner = MATMUL_ORDERS[v.order as number].map((n) =>
      ({ "i.1": i1, "j.1": j1, "i.2": i2, "j.2": j2, "k.0": k0, "k.1": k1 })[n]!
    );
    sch.reorder(red, [i0, j0, ...inner]);
    if (v.parallel === 1) sch.parallel(red, sch.fuse(red, [i0, j0]));
    if (v.vectorize === 1) sch.vectorize(red, j2);
    sch.autoUnroll(red, v.unroll as number);
  };
}

/**
 * Knobs of `matmul-packed`, BLIS/TVM-`dense_pack` style: a register tile of
 * MR x NR accumulators (`cache_write` local, rows unrolled, columns in
 * vectors), MC x NC cache blocks (counted in register tiles), packed
 * operands (`cache_read` "global" + `transform_layout` into k-major panels),
 * the order of the tile loops in a block, an unroll of the reduction, the
 * parallel outer loop, and KC (0: the whole reduction inside the register
 * tile, TVM's `dense_pack`; 256 or 512: BLIS's KC blocks, see
 * `packedKcApply`).
 */
function packedKnobs(_w: Workload): Knob[] {
  return [
    { name: "mr", kind: "split", options: [4, 6, 8] },
    { name: "nr", kind: "split", options: [16, 32, 48, 64] },
    { name: "mc", kind: "split", options: [1, 2, 4, 8, 16, 32] },
    { name: "nc", kind: "split", options: [1, 2, 4, 8, 16] },
    { name: "pack", kind: "other", options: ["none", "B", "AB"] },
    { name: "order", kind: "reorder", options: [0, 1] },
    { name: "unroll_k", kind: "annotate", options: [1, 2, 4] },
    { name: "parallel", kind: "annotate", options: [0, 1] },
    { name: "kc", kind: "split", options: [0, 256, 512] },
  ];
}

/**
 * The loop nest of `matmul-packed` (names of the C stage's loops):
 * `io` (parallel: MC-row blocks; A packed here, per thread), `jo`
 * (NC-column blocks), then `ir`/`jr` (register tiles, in the knob's order)
 * where the tile `C_local` is computed: `k` (split by `unroll_k`), then MR
 * rows unrolled and NR columns vectorized. B is packed once per call into
 * `[N/NR][K][NR]` panels by a parallel loop; A into `[MC/MR][K][MR]`.
 */
function packedApply(sch: Schedule, v: Record<string, unknown>): void {
  if ((v.kc as number) > 0) return packedKcApply(sch, v);
  const [MR, NR, mc, nc, uk] = [v.mr, v.nr, v.mc, v.nc, v.unroll_k] as number[];
  const local = sch.cacheWrite("C");
  const pack = v.pack as string;
  const bp = pack !== "none" ? sch.cacheRead("B", "global", [local]) : undefined;
  const ap = pack === "AB" ? sch.cacheRead("A", "global", [local]) : undefined;
  const [io, ir, ii] = sch.split("C", "i", [null, mc, MR]);
  const [jo, jr, ji] = sch.split("C", "j", [null, nc, NR]);
  sch.reorder("C", [io, jo, ...(v.order === 0 ? [ir, jr] : [jr, ir]), ii, ji]);
  if (v.parallel === 1) sch.parallel("C", io);
  sch.computeAt(local, "C", v.order === 0 ? jr : ir);
  sch.unroll("C", ii);
  sch.vectorize("C", ji);
  if (uk > 1) {
    const [k0, k1] = sch.split(local, "k", [null, uk]);
    sch.reorder(local, [k0, k1, "i", "j"]);
    sch.unroll(local, k1);
  } else sch.reorder(local, ["k", "i", "j"]);
  sch.unroll(local, "i");
  sch.vectorize(local, "j");
  if (bp) packPanelsB(sch, bp, NR);
  if (ap) packPanelsA(sch, ap, MR, ["C", io]);
}

/**
 * `matmul-packed` with a KC block (knob `kc` > 0), BLIS's loop order: `jo`
 * (NC columns), `ko` (KC of the reduction; B's KC x NC block packed here by
 * a parallel loop, shared by the threads), `io` (parallel MC rows; A's MC x
 * KC block packed per thread), the register tiles, then `ki`, MR rows
 * unrolled and NR columns vectorized. C accumulates across KC blocks; the
 * C generator keeps each tile's accumulators in vector variables over `ki`.
 */
function packedKcApply(sch: Schedule, v: Record<string, unknown>): void {
  const [MR, NR, mc, nc, uk, kc] = [v.mr, v.nr, v.mc, v.nc, v.unroll_k, v.kc] as number[];
  const pack = v.pack as string;
  const bp = pack !== "none" ? sch.cacheRead("B", "global", ["C"]) : undefined;
  const ap = pack === "AB" ? sch.cacheRead("A", "global", ["C"]) : undefined;
  const [io, ir, ii] = sch.split("C", "i", [null, mc, MR]);
  const [jo, jr, ji] = sch.split("C", "j", [null, nc, NR]);
  const [ko, ki] = sch.split("C", "k", [null, kc]);
  const tiles = v.order === 0 ? [ir, jr] : [jr, ir];
  if (uk > 1) {
    const [k0, k1] = sch.split("C", ki, [null, uk]);
    sch.reorder("C", [jo, ko, io, ...tiles, k0, k1, ii, ji]);
    sch.unroll("C", k1);
  } else sch.reorder("C", [jo, ko, io, ...tiles, ki, ii, ji]);
  if (v.parallel === 1) sch.parallel("C", io);
  sch.unroll("C", ii);
  sch.vectorize("C", ji);
  if (bp) packPanelsB(sch, bp, NR, ["C", ko]);
  if (ap) packPanelsA(sch, ap, MR, ["C", io]);
}

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
 * The padding copy `P` of a channel-blocked input: a vector per pixel (the
 * block `b`), its channel blocks in parallel when `parallel`.
 */
function vectorizeBlockedPadding(sch: Schedule, parallel: boolean): void {
  if (parallel) sch.parallel("P", "c");
  sch.vectorize("P", "b");
}

/**
 * The padding copy `P` of a convolution: its rows (loop `columns`) in 16-wide
 * vectors, masked at the edges, its channels in parallel when `parallel`.
 */
function vectorizePadding(sch: Schedule, parallel: boolean, columns: string): void {
  if (parallel) sch.parallel("P", "c");
  const [, x1] = sch.split("P", columns, [null, 16]);
  sch.vectorize("P", x1);
}

/** Reduction orders of `conv2d-packed`'s register tile. */
const CONV_REDUCE_ORDERS = [["rc", "ry", "rx"], ["ry", "rx", "rc"]];

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
 * The output loops of the channel-vector tile (`conv2d-nchwc`,
 * `conv2d-nchwxc`): `n`, `f.0`, `y.0`, `x.0`, then YR rows and XR columns
 * unrolled and FR channels vectorized; the parallel loop `n` x `f.0` (`f`)
 * or `n` x `f.0` x `y.0` (`fy`); the tile `local` computed at `x.0`. With
 * `y` (`conv2d-nchwxc` only) the outer loops are `n` x `y.0` (parallel),
 * `x.0`, `f.0`, the tile at `f.0`: a tile's input is read once for every
 * channel block instead of once per block (a 1x1 stride-2 layer re-read its
 * whole input for each of `F/FR` blocks).
 */
function channelTileLoops(sch: Schedule, local: string, v: Record<string, unknown>): void {
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
function outputBlocksPerTile(v: Record<string, unknown>): number {
  return (v.oc_blocks as number | undefined) ?? 1;
}

/**
 * The tile's own loops after its reduction order is set: the kernel's width
 * unrolled when `unroll_kw`, rows and columns unrolled, channels vectorized.
 */
function channelTileBody(sch: Schedule, local: string, v: Record<string, unknown>): void {
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
function channelTileFits(
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
function convNCHWxcKnobs(w: Workload): Knob[] {
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
 * The heuristic point of `conv2d-blocked` on a padded layer with blocked
 * input and 16-lane vectors: the padding read in place, a row tile of 2
 * output blocks, else 1, covering the output's row where its accumulators,
 * filter vectors and broadcast fit the registers (oneDNN's `ur_w` by
 * `nb_oc_blocking`), as many rows of it as fit, else 14 columns by 2 blocks;
 * blocks in parallel where there are at least 4 tiles of them, else rows.
 * On ResNet-18's 3x3 layers, two threads (`bench/tiles.ts`), such tiles ran
 * 1.04-1.25x faster than a 2,000-trial session's picks (README, "The padding
 * read in place"); on its 7-wide outputs two rows of 7 x 2 blocks ran
 * 1.08-1.11x faster than one (README, "Rows in the heuristic tile").
 */
function convBlockedHeuristic(
  w: Workload,
  target: RegisterFile,
): Record<string, unknown> | undefined {
  const [, , , , F, , , , pad, CB, FB] = w.shape;
  if (pad === 0 || CB === 1 || target.lanes !== 16) return undefined;
  const blocks = F / FB, vectors = Math.ceil(FB / target.lanes);
  const knobs = convNCHWxcKnobs(w);
  const options = (name: string) => knobs.find((k) => k.name === name)!.options as number[];
  const row = options("xr").find((c) => c >= outWidth(w));
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
    for (const yr of rows) {
      const v = { ...tile(row, oc, blocks / oc >= 4 ? "f" : "y"), yr };
      if (channelTileFits(v, w, target, oc * vectors)) return v;
    }
  }
  return tile(14, blocks % 2 === 0 ? 2 : 1, "y", 0);
}

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

const TEMPLATES: Record<string, Template> = {
  matmul: { workloads: ["matmul"], knobs: matmulKnobs, apply: matmulApply("C") },
  "matmul-packed": { workloads: ["matmul"], knobs: packedKnobs, apply: packedApply },
  dense: {
    workloads: ["dense"],
    knobs: (w) => matmulKnobs(w).filter((k) => k.name !== "cache_write" && k.name !== "order"),
    apply: (sch, v) => matmulApply("D", "Y")(sch, { ...v, order: 0 }),
  },
  conv2d: {
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
  },
  "conv2d-packed": {
    workloads: ["conv2d"],
    knobs: convPackedKnobs,
    apply: convPackedApply,
    // A tile of more accumulators than AVX-512 has registers (32) lives in
    // memory, and gcc needs minutes for its unrolled body.
    isValid: (v) => (v.fr as number) * (v.yr as number) * Math.ceil((v.xr as number) / 16) <= 32,
  },
  "conv2d-nchwc": {
    workloads: ["conv2d"],
    knobs: convNCHWcKnobs,
    apply: convNCHWcApply,
    isValid: channelTileFits,
  },
  "conv2d-nchwxc": {
    workloads: ["conv2d"],
    knobs: convNCHWxcKnobs,
    apply: convNCHWxcApply,
    isValid: channelTileFits,
  },
  "conv2d-blocked": {
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
  },
  "depthwise-blocked": {
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
  },
  "conv2d-rich": {
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
  },
};

/** Names of the knob templates. */
export const TEMPLATE_NAMES: readonly string[] = Object.keys(TEMPLATES);

/**
 * Names of the templates that schedule a workload.
 *
 * @example
 * ```ts
 * import { templatesOf } from "./templates.ts";
 * import { matmul } from "../ir/workloads.ts";
 * if (!templatesOf(matmul(8, 8, 8)).includes("matmul-packed")) throw new Error();
 * ```
 */
export function templatesOf(w: Workload): string[] {
  return TEMPLATE_NAMES.filter((name) => TEMPLATES[name].workloads.includes(w.name));
}

/**
 * The knob space of a template on a workload; register rules count
 * `target`'s registers (default: this machine's, {@link registerFile}).
 */
export function templateSpace(
  name: string,
  w: Workload,
  target: RegisterFile = registerFile(),
): TemplateSpace {
  const t = Object.hasOwn(TEMPLATES, name) ? TEMPLATES[name] : undefined;
  if (!t) throw new RangeError(`Unknown template "${name}"; known: ${TEMPLATE_NAMES.join(", ")}`);
  if (!t.workloads.includes(w.name)) {
    throw new RangeError(`Template "${name}" schedules ${t.workloads.join(", ")}, not ${w.name}`);
  }
  const valid = t.isValid;
  const space = new KnobSpace(
    t.knobs(w),
    valid ? { isValid: (values) => valid(values, w, target) } : {},
  );
  return {
    name,
    workload: w,
    space,
    candidateOf(point: Point): Candidate {
      const sch = new Schedule(w, { prng: createPrng(0) });
      t.apply(sch, space.values(point));
      return { knobs: [...point], trace: traceOf(sch) };
    },
    heuristic(): Candidate | undefined {
      const values = t.heuristic?.(w, target);
      const point = values && pointOfValues(space.knobs, withDefaults(space.knobs, values));
      return point && space.isValid(point) ? this.candidateOf(point) : undefined;
    },
  };
}

/** The templates of the channel-blocked workloads, whose names are not a template's. */
const BLOCKED_DEFAULTS: Record<string, string> = {
  conv2d_nchwc: "conv2d-blocked",
  depthwise_conv2d_nchwc: "depthwise-blocked",
};

/**
 * The default template of a workload: the four-knob form for conv2d,
 * `conv2d-blocked` for the blocked convolution, `depthwise-blocked` for the
 * blocked depthwise one, else the workload's name.
 */
export function defaultTemplate(w: Workload): string {
  return Object.hasOwn(BLOCKED_DEFAULTS, w.name) ? BLOCKED_DEFAULTS[w.name] : w.name;
}

function outHeight(w: Workload): number {
  const [, , H, , , KH, , stride, pad] = w.shape;
  return Math.floor((H + 2 * pad - KH) / stride) + 1;
}

function outWidth(w: Workload): number {
  const [, , , W, , , KW, stride, pad] = w.shape;
  return Math.floor((W + 2 * pad - KW) / stride) + 1;
}
