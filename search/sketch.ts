/**
 * Sketches of the default CPU space, after Ansor's rules: multi-level tiling
 * "SSRSRS" of the reduction stage, optionally with a local cache of the
 * output (the register tile) or the element-wise consumer fused on top,
 * parallel outer tiles, vectorized innermost tiles, auto-unroll, and
 * sampled compute locations of element-wise producers (padding).
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
import { Expr } from "../ir/te.ts";
import { computeStages, type Workload } from "../ir/workloads.ts";
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
  const o = { ...DEFAULTS, ...options };
  return traceSpace(w, sketchesOf(w, o));
}

/** The sketches that apply to a workload, by name. */
export function sketchesOf(w: Workload, o: SketchOptions = DEFAULTS): Record<string, Sketch> {
  const reduction = computeStages(w).reverse().find((t) => t.reduce !== undefined);
  if (!reduction) return { elementwise: (sch) => elementwise(sch, o) };
  const name = reduction.name;
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
  };
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
