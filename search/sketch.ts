/**
 * Sketches of the default CPU space, after Ansor's rules: multi-level tiling
 * "SSRSRS" of the reduction stage, optionally with a local cache of the
 * output (the register tile) or the element-wise consumer fused on top,
 * parallel outer tiles, vectorized innermost tiles, auto-unroll, and
 * sampled compute locations of element-wise producers (padding); for matmul
 * also `tile+pack` (a register tile over packed operands, the whole reduction
 * inside it) and `tile+pack+kc` (BLIS: KC blocks of the reduction outside it).
 *
 * @example
 * ```ts
 * import { defaultSpace } from "./sketch.ts";
 * import { matmul } from "../ir/workloads.ts";
 * import { createPrng } from "../ir/prng.ts";
 * const space = defaultSpace(matmul(64, 64, 64));
 * const trace = space.sample(createPrng(1));
 * if (trace.insts.length === 0) throw new Error();
 * ```
 * @module
 */
import type { Schedule } from "../ir/schedule.ts";
import { readsOf } from "../ir/stage.ts";
import { Expr } from "../ir/te.ts";
import { computeStages, type Workload } from "../ir/workloads.ts";
import { checkInteger, checkObject, checkWorkload, described } from "../ir/check.ts";
import { packPanelsA, packPanelsB } from "./packing.ts";
import { type DesignSpace, type Sketch, traceSpace } from "./space.ts";

/** Tunable limits of the sketches. */
export interface SketchOptions {
  /** Largest innermost tile of the vectorized axis. Default 64. */
  maxVector: number;
  /** Largest innermost tile of other spatial axes. Default 8. */
  maxInner: number;
  /** Candidate `auto_unroll_max_step` values. Default [0, 16, 64, 512]. */
  unrollSteps: number[];
}

const DEFAULTS: SketchOptions = { maxVector: 64, maxInner: 8, unrollSteps: [0, 16, 64, 512] };

/** The default CPU design space of a workload. */
export function defaultSpace(w: Workload, options: Partial<SketchOptions> = {}): DesignSpace {
  checkWorkload(w, "workload");
  checkObject(options, "options");
  checkInteger(options.maxVector, "maxVector", { min: 1, optional: true });
  checkInteger(options.maxInner, "maxInner", { min: 1, optional: true });
  if (
    options.unrollSteps !== undefined &&
    !(Array.isArray(options.unrollSteps) && options.unrollSteps.every(Number.isInteger))
  ) {
    throw new TypeError(
      `unrollSteps must be a list of integers, got ${described(options.unrollSteps)}`,
    );
  }
  const o = { ...DEFAULTS, ...options };
  return traceSpace(w, sketchesOf(w, o));
}

/** The sketches that apply to a workload, by name. */
export function sketchesOf(w: Workload, o: SketchOptions = DEFAULTS): Record<string, Sketch> {
  const reduction = computeStages(w).reverse().find((t) => t.reduce !== undefined);
  if (!reduction) return { elementwise: (sch) => elementwise(sch, o) };
  const name = reduction.name;
  const packed: Record<string, Sketch> = isMatmul(w)
    ? {
      "tile+pack": (sch) => packedTile(sch, name),
      "tile+pack+kc": (sch) => packedKcTile(sch, name),
    }
    : {};
  return {
    "tile": (sch) => {
      multiLevelTile(sch, name, o, true);
      producers(sch);
    },
    "tile+cache": (sch) => {
      const s = sch.stage(name);
      if (s.isOutput) twoStageTile(sch, name, sch.cacheWrite(name), o);
      else twoStageTile(sch, sch.consumers(s)[0].name, name, o);
      producers(sch);
    },
    ...packed,
  };
}

/** `C[i, j] = sum_k A[i, k] B[k, j]`: the workloads the packed sketch applies to. */
function isMatmul(w: Workload): boolean {
  return w.name === "matmul";
}

/** Register tile rows, columns, and cache blocks (in register tiles), as sampled. */
const PACKED = {
  mr: [4, 6, 8],
  nr: [16, 32, 48, 64],
  mc: [1, 2, 4, 8, 16],
  nc: [1, 2, 4, 8],
  kc: [128, 256, 512],
};

/** Samples one of `xs` that is at most `limit` (the smallest when none is). */
function pickAtMost(sch: Schedule, xs: number[], limit: number) {
  const fit = xs.filter((x) => x <= limit);
  const cands = fit.length > 0 ? fit : [xs[0]];
  return sch.sampleCategorical(cands, cands.map(() => 1));
}

/**
 * The BLIS / TVM `dense_pack` structure with sampled sizes: an MR x NR
 * register tile (`cache_write` local; rows unrolled, columns in vectors) at
 * the tile loop of MC x NC cache blocks whose row blocks run in parallel; B
 * packed once per call into NR-column k-major panels (a parallel copy), A
 * per row block into MR-row panels (`cache_read` "global" +
 * `transform_layout`). Sizes larger than the matrix are left out.
 */
function packedTile(sch: Schedule, stage: string): void {
  const [M, N] = sch.stage(stage).shape;
  const [A, B] = readsOf(sch.stage(stage));
  const pick = (xs: number[], limit: number) => pickAtMost(sch, xs, limit);
  const mr = pick(PACKED.mr, M), nr = pick(PACKED.nr, Math.ceil(N / 16) * 16);
  const mc = pick(PACKED.mc, Infinity), nc = pick(PACKED.nc, Infinity);
  const local = sch.cacheWrite(stage);
  const bp = sch.cacheRead(B, "global", [local]);
  const ap = sch.cacheRead(A, "global", [local]);
  const [io, ir, ii] = sch.split(stage, "i", [null, mc, mr]);
  const [jo, jr, ji] = sch.split(stage, "j", [null, nc, nr]);
  sch.reorder(stage, [io, jo, ir, jr, ii, ji]);
  sch.parallel(stage, io);
  sch.computeAt(local, stage, jr);
  sch.unroll(stage, ii);
  sch.vectorize(stage, ji);
  sch.reorder(local, ["k", "i", "j"]);
  sch.unroll(local, "i");
  sch.vectorize(local, "j");
  packPanelsB(sch, bp, nr);
  packPanelsA(sch, ap, mr, [stage, io]);
}

/**
 * `tile+pack` in BLIS's loop order with a sampled KC: NC-column blocks, then
 * KC blocks of the reduction (B's KC x NC block packed there by a parallel
 * loop, shared by the threads), then parallel MC-row blocks (A's block
 * packed per thread), register tiles, and the KC loop around the MR rows
 * (unrolled) and NR columns (vectors). C accumulates across KC blocks in
 * vector variables (accumulator promotion in the C generator).
 */
function packedKcTile(sch: Schedule, stage: string): void {
  const s = sch.stage(stage);
  const [M, N] = s.shape;
  const K = s.reduceAxes[0].extent;
  const [A, B] = readsOf(s);
  const mr = pickAtMost(sch, PACKED.mr, M);
  const nr = pickAtMost(sch, PACKED.nr, Math.ceil(N / 16) * 16);
  const mc = pickAtMost(sch, PACKED.mc, Infinity), nc = pickAtMost(sch, PACKED.nc, Infinity);
  const kc = pickAtMost(sch, PACKED.kc, K);
  const bp = sch.cacheRead(B, "global", [stage]);
  const ap = sch.cacheRead(A, "global", [stage]);
  const [io, ir, ii] = sch.split(stage, "i", [null, mc, mr]);
  const [jo, jr, ji] = sch.split(stage, "j", [null, nc, nr]);
  const [ko, ki] = sch.split(stage, "k", [null, kc]);
  sch.reorder(stage, [jo, ko, io, ir, jr, ki, ii, ji]);
  sch.parallel(stage, io);
  sch.unroll(stage, ii);
  sch.vectorize(stage, ji);
  packPanelsB(sch, bp, nr, [stage, ko]);
  packPanelsA(sch, ap, mr, [stage, io]);
}

/** SSRSRS tiling of one stage, with parallel outer tiles, vectorize and auto-unroll. */
function multiLevelTile(sch: Schedule, stage: string, o: SketchOptions, parallel: boolean): void {
  const s = sch.stage(stage);
  const spatial = s.axes.map((a) => a.name), reduce = s.reduceAxes.map((a) => a.name);
  const S = spatial.map((ax, i) =>
    sch.split(stage, ax, sch.samplePerfectTile(stage, ax, 4, innerLimit(i, spatial, o)))
  );
  const R = reduce.map((ax) => sch.split(stage, ax, sch.samplePerfectTile(stage, ax, 2, 64)));
  const level = (xs: string[][], l: number) => xs.map((x) => x[l]);
  sch.reorder(stage, [
    ...level(S, 0),
    ...level(S, 1),
    ...level(R, 0),
    ...level(S, 2),
    ...level(R, 1),
    ...level(S, 3),
  ]);
  if (parallel) parallelOuter(sch, stage, level(S, 0));
  sch.vectorize(stage, S[S.length - 1][3]);
  sch.autoUnroll(stage, sch.sampleCategorical(o.unrollSteps, o.unrollSteps.map(() => 1)));
}

/**
 * Tiles `outer` (S S S) and computes `inner` (the reduction) at its second
 * level, where `inner` is tiled S R S with its reduction outside: the local
 * accumulator tile of Ansor's cache-write rule, or a fused consumer.
 */
function twoStageTile(sch: Schedule, outer: string, inner: string, o: SketchOptions): void {
  const spatial = sch.stage(outer).axes.map((a) => a.name);
  const S = spatial.map((ax, i) =>
    sch.split(
      outer,
      ax,
      sch.samplePerfectTile(outer, ax, 3, i === spatial.length - 1 ? o.maxVector : o.maxInner * 8),
    )
  );
  const level = (xs: string[][], l: number) => xs.map((x) => x[l]);
  sch.reorder(outer, [...level(S, 0), ...level(S, 1), ...level(S, 2)]);
  parallelOuter(sch, outer, level(S, 0));
  sch.computeAt(inner, outer, S[S.length - 1][1]);
  sch.vectorize(outer, S[S.length - 1][2]);
  const s = sch.stage(inner);
  const ispatial = s.axes.map((a) => a.name), reduce = s.reduceAxes.map((a) => a.name);
  const IS = ispatial.map((ax, i) =>
    sch.split(inner, ax, sch.samplePerfectTile(inner, ax, 2, innerLimit(i, ispatial, o)))
  );
  const R = reduce.map((ax) => sch.split(inner, ax, sch.samplePerfectTile(inner, ax, 2, 64)));
  sch.reorder(inner, [...level(R, 0), ...level(IS, 0), ...level(R, 1), ...level(IS, 1)]);
  sch.vectorize(inner, IS[IS.length - 1][1]);
  sch.autoUnroll(inner, sch.sampleCategorical(o.unrollSteps, o.unrollSteps.map(() => 1)));
}

/** Fuses the first few outermost spatial tiles (a sampled count) and runs them in parallel. */
function parallelOuter(sch: Schedule, stage: string, loops: string[]): void {
  // How many outer tiles share the parallel loop is a decision (MutateParallel).
  const counts = loops.map((_, i) => i + 1);
  const count = loops.length > 1 ? sch.sampleCategorical(counts, counts.map(() => 1)) : 1;
  sch.parallelOuter(stage, loops, count);
}

/** Compute locations of element-wise producers that are neither inlined nor outputs. */
function producers(sch: Schedule): void {
  for (const s of [...sch.stages]) {
    if (s.isOutput || !(s.body instanceof Expr) || s.attach.k !== "root" || s.touched) continue;
    if (sch.consumers(s).length !== 1) continue;
    sch.computeAt(s.name, sch.consumers(s)[0].name, sch.sampleComputeLocation(s.name));
  }
}

/** Element-wise workloads: split the last axis for vectors, parallel the first. */
function elementwise(sch: Schedule, o: SketchOptions): void {
  const out = sch.stages[sch.stages.length - 1];
  const axes = out.axes.map((a) => a.name);
  const last = axes[axes.length - 1];
  const [, v] = sch.split(out.name, last, sch.samplePerfectTile(out.name, last, 2, o.maxVector));
  sch.parallel(out.name, axes[0] === last ? sch.loops(out.name)[0] : axes[0]);
  sch.vectorize(out.name, v);
}

function innerLimit(i: number, axes: string[], o: SketchOptions): number {
  return i === axes.length - 1 ? o.maxVector : o.maxInner;
}
