/**
 * Features a cost model learns from, named and versioned.
 *
 * Three feature sets:
 *
 * - **Knob features** ({@link knobFeatures}): for a point of a knob space, per
 *   knob the option index normalised to [0, 1] and, for split knobs, log2 of
 *   each factor. Their length depends on the space.
 * - **Loop features** ({@link loopFeatures}), after AutoTVM's itervar
 *   features: per loop around the main compute statement of the lowered
 *   kernel, innermost first, its extent, depth, annotation and, per buffer
 *   access of the statement, the stride, touch count and reuse. Fixed length
 *   ({@link LOOP_SLOTS} loops x {@link BUFFER_SLOTS} accesses).
 * - **Fixed features** ({@link fixedFeatures}): a vector that does not
 *   depend on the loop structure (arithmetic intensity, parallelism,
 *   vectorisation, unrolling, access contiguity, local buffers, and
 *   footprint / reuse curves sampled at fixed points), so one model can serve
 *   several workloads.
 * - **GEMM features** ({@link GEMM_FEATURE_NAMES}, `gemm_features.ts`),
 *   appended to both loop and fixed features: what the `gemm.*` pragmas of a
 *   GEMM-template GPU candidate configure (tiles, mma kind, loads, stages,
 *   vector widths, split-K, shared memory, threads, blocks against the SMs of
 *   an H100). Such a schedule lowers to the workload's naive nest whatever its
 *   pragmas, so without them every candidate of the template looks the same.
 *   All zero for other schedules.
 *
 * Every set has `names` (one per column, documented beside its constant) and
 * {@link FEATURE_VERSION}; a model trained on one version must not be fed
 * another.
 *
 * Definitions used throughout. The *main statement* of a kernel is the
 * accumulating store (`+=`) with the most loops around it (the first in
 * program order on a tie; the store with the most loops when no store
 * accumulates). Its *chain* is the list of `for` loops enclosing it; loops of
 * extent 1 run once and are left out. Index expressions are expanded through
 * `let`s, so an index is a function of chain loop variables only. For an
 * access (the store's buffer, then every load of the stored value, left to
 * right, exact duplicates dropped) and a chain loop `l`:
 *
 * - *stride*: `index(l = 1, others 0) - index(all 0)`, a finite difference
 *   (exact for affine indices; for fused loops it is the step of the `%` part);
 * - *depends*: the variable of `l` occurs in the expanded index;
 * - *touch*: product of the extents of the loops at and inside `l` the index
 *   depends on (AutoTVM's touch count: an upper bound of the distinct
 *   elements accessed during one full run of `l`);
 * - *reuse*: product of the extents of the loops at and inside `l` the index
 *   does not depend on (touch x reuse = iterations of `l`'s nest);
 * - *footprint*: `min(touch, hi - lo + 1)` where `[lo, hi]` is the interval
 *   of the index with the loops at and inside `l` ranging over their extents
 *   and the outer ones at 0 (overlapping windows, as in convolution, are
 *   counted once).
 *
 * @example
 * ```ts
 * import { featurize, FIXED_FEATURE_NAMES } from "./features.ts";
 * import { defaultSpace } from "../search/sketch.ts";
 * import { matmul } from "../ir/workloads.ts";
 * import { createPrng } from "../ir/prng.ts";
 * const space = defaultSpace(matmul(64, 64, 64));
 * const traces = [1, 2, 3].map((s) => space.sample(createPrng(s)));
 * const m = featurize(traces, "fixed");
 * if (m.rows !== 3 || m.cols !== FIXED_FEATURE_NAMES.length) throw new Error();
 * ```
 * @module
 */
import {
  type AExpr,
  bounds,
  forEachLoad,
  type ForKind,
  type Kernel,
  type Stmt,
  varsOf,
} from "../ir/ast.ts";
import { lower } from "../ir/lower.ts";
import { createPrng } from "../ir/prng.ts";
import { replayTrace, type Trace } from "../ir/trace.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import type { Matrix } from "./regressor.ts";
import { GEMM_FEATURE_DOCS, GEMM_FEATURE_NAMES, gemmFeatures } from "./gemm_features.ts";

export { GEMM_FEATURE_NAMES };

/** Version of every feature set here; bump it when a definition or an order changes. */
export const FEATURE_VERSION = "tb-features-2";

/** Loops of the main statement described by {@link loopFeatures} (innermost first). */
export const LOOP_SLOTS = 12;
/** Buffer accesses of the main statement described per loop (store first, then loads). */
export const BUFFER_SLOTS = 4;
/** Cores the parallel-utilisation feature assumes. */
export const CORES = 2;
/** Cumulative log2 iteration counts at which the footprint and reuse curves are sampled. */
export const CURVE_POINTS: readonly number[] = Object.freeze([0, 3, 6, 9, 12, 15, 18, 21, 24, 27]);
/** Cache sizes (log2 bytes) at which the cache curve is sampled: 1 KiB to 16 MiB. */
export const CACHE_POINTS: readonly number[] = Object.freeze([10, 12, 14, 15, 16, 18, 20, 22, 24]);

/** Kinds of trace features {@link featurize} computes. */
export type FeatureKind = "loop" | "fixed";

/** A named, versioned feature set. */
export interface FeatureSet {
  /** Column names, one per feature. */
  names: readonly string[];
  /** {@link FEATURE_VERSION}. */
  version: string;
}

/** A feature matrix: rows x cols, row-major, with its column names and version. */
export interface FeatureMatrix extends Matrix {
  /** Column names (`cols` of them). */
  names: string[];
  /** {@link FEATURE_VERSION}. */
  version: string;
}

// ---------------------------------------------------------------------------
// Knob features

/**
 * Names of {@link knobFeatures} for a space: per knob `<knob>.idx` (option
 * index / (options - 1), 0 for a single option) and, for split knobs,
 * `<knob>.f<j>.log2` (log2 of factor j; 0 for a missing or null factor).
 */
export function knobFeatureNames(space: KnobSpace): string[] {
  const out: string[] = [];
  for (const k of space.knobs) {
    out.push(`${k.name}.idx`);
    for (let j = 0; j < splitParts(k); j++) out.push(`${k.name}.f${j}.log2`);
  }
  return out;
}

/** Knob features of a point of a space; see {@link knobFeatureNames}. */
export function knobFeatures(space: KnobSpace, point: Point): number[] {
  space.values(point); // checks the point
  const out: number[] = [];
  space.knobs.forEach((k, i) => {
    const n = k.options.length;
    out.push(n > 1 ? point[i] / (n - 1) : 0);
    const parts = splitParts(k);
    const opt = k.options[point[i]];
    for (let j = 0; j < parts; j++) {
      const f = Array.isArray(opt) ? opt[j] : undefined;
      out.push(typeof f === "number" && f > 0 ? Math.log2(f) : 0);
    }
  });
  return out;
}

function splitParts(k: KnobSpace["knobs"][number]): number {
  if (k.kind !== "split") return 0;
  return Math.max(0, ...k.options.map((o) => (Array.isArray(o) ? o.length : 0)));
}

// ---------------------------------------------------------------------------
// Names

const KINDS: readonly ForKind[] = ["serial", "parallel", "vectorize", "unroll"];

/**
 * Names of {@link loopFeatures}: for loop slot `l<k>` (k = 0 is the innermost
 * loop of extent > 1 around the main statement; slots beyond the chain are
 * all zero):
 * - `l<k>.log2_extent`: log2(extent + 1) (>= 1 for a real loop);
 * - `l<k>.depth`: position in the chain counted from the outermost (0);
 * - `l<k>.serial|parallel|vectorize|unroll`: one-hot annotation;
 * - per access slot `b<j>` (b0 the stored buffer, then loads in order):
 *   `l<k>.b<j>.stride` log2(|stride| + 1), `l<k>.b<j>.touch` log2(touch),
 *   `l<k>.b<j>.reuse` log2(reuse) (see the module documentation);
 * then the GEMM features ({@link GEMM_FEATURE_NAMES}).
 */
export const LOOP_FEATURE_NAMES: readonly string[] = Object.freeze([
  ...loopNames(),
  ...GEMM_FEATURE_NAMES,
]);

function loopNames(): string[] {
  const out: string[] = [];
  for (let k = 0; k < LOOP_SLOTS; k++) {
    out.push(`l${k}.log2_extent`, `l${k}.depth`, ...KINDS.map((kind) => `l${k}.${kind}`));
    for (let b = 0; b < BUFFER_SLOTS; b++) {
      out.push(`l${k}.b${b}.stride`, `l${k}.b${b}.touch`, `l${k}.b${b}.reuse`);
    }
  }
  return out;
}

/**
 * Scalar fixed features, in order, with their definitions. "Main" is the
 * main statement and its chain (module documentation).
 */
const SCALARS: readonly [string, string][] = [
  ["flops.log2", "log2 of the workload's floating-point operations"],
  [
    "ai.log2",
    "log2 arithmetic intensity: flops / bytes of all kernel buffers (parameters and temporaries)",
  ],
  ["main.iters.log2", "log2 of the main statement's iteration count"],
  ["main.depth", "loops of extent > 1 around the main statement"],
  ["main.guards", "if statements around the main statement (imperfect tiles)"],
  ["main.accesses", "buffer accesses of the main statement (store plus distinct loads)"],
  ["parallel.log2_extent", "log2 product of the extents of parallel loops around main"],
  [
    "parallel.utilisation",
    `parallel extent / (${CORES} * ceil(extent / ${CORES})): busy fraction of ${CORES} cores`,
  ],
  ["parallel.log2_work", "log2 of main iterations per parallel task"],
  ["vector.width", "extent of the vectorized loop around main (1 when none)"],
  ["vector.log2_width", "log2 of vector.width"],
  ["unroll.log2_product", "log2 product of the extents of unrolled loops around main"],
  ["innermost.log2_extent", "log2 extent of main's innermost loop of extent > 1"],
  ["access.contiguous_frac", "fraction of main's accesses with stride 1 in the innermost loop"],
  ["access.invariant_frac", "fraction of main's accesses not depending on the innermost loop"],
  ["local.log2_bytes", "log2(1 + bytes of all local buffers (alloc statements))"],
  ["local.count", "number of local buffers"],
  ["local.heap_count", "local buffers too large for the stack (allocated on the heap)"],
  ["temps.log2_bytes", "log2(1 + bytes of kernel-wide temporaries (intermediate stages at root))"],
  ["loops.count", "for loops in the kernel"],
  ["stores.count", "store statements in the kernel"],
  ["stores.log2_iters", "log2 of the summed iteration counts of all stores"],
];

/** Curve slots: access slots b0..b3, then all buffers together. */
const CURVE_SLOTS = [...Array.from({ length: BUFFER_SLOTS }, (_, b) => `b${b}`), "total"];

/**
 * Names of {@link fixedFeatures}. First the scalars (see the table in the
 * source; {@link FIXED_FEATURE_DOCS} maps every name to its definition), then
 * the curves, for the main chain from the innermost loop outwards as a
 * piecewise-linear function of x = cumulative log2 iteration count (loops
 * fully inside; clamped at the chain's total), sampled at x in
 * {@link CURVE_POINTS}:
 * - `fp.<slot>.x<x>`: log2 footprint in bytes of access slot b0..b3 (0 when
 *   absent) or of all buffers (`total`, per buffer the largest footprint of
 *   its accesses, summed over buffers);
 * - `reuse.<slot>.x<x>`: x - log2 footprint in elements, i.e. log2 of
 *   iterations per distinct element (0 when absent);
 * - `cache.y<y>`: for y in {@link CACHE_POINTS}, the x at which the total
 *   footprint reaches 2^y bytes (the log2 iterations a cache of that size
 *   holds); the chain's total when never reached;
 * - then the GEMM features ({@link GEMM_FEATURE_NAMES}).
 */
export const FIXED_FEATURE_NAMES: readonly string[] = Object.freeze(fixedNames());

function fixedNames(): string[] {
  const out = SCALARS.map(([n]) => n);
  for (const s of CURVE_SLOTS) for (const x of CURVE_POINTS) out.push(`fp.${s}.x${x}`);
  for (const s of CURVE_SLOTS) for (const x of CURVE_POINTS) out.push(`reuse.${s}.x${x}`);
  for (const y of CACHE_POINTS) out.push(`cache.y${y}`);
  return [...out, ...GEMM_FEATURE_NAMES];
}

/** Every fixed feature's name with a one-line definition. */
export const FIXED_FEATURE_DOCS: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(
    FIXED_FEATURE_NAMES.map((n) => {
      const scalar = SCALARS.find(([s]) => s === n);
      if (scalar) return [n, scalar[1]];
      if (GEMM_FEATURE_DOCS[n]) return [n, GEMM_FEATURE_DOCS[n]];
      const [fam, slot, at] = n.split(".");
      const who = slot === "total" ? "all buffers" : `access slot ${slot}`;
      if (fam === "fp") return [n, `log2 footprint bytes of ${who} at ${at.slice(1)} log2 iters`];
      if (fam === "reuse") return [n, `log2 iterations per element of ${who} at ${at.slice(1)}`];
      return [n, `log2 iterations whose footprint fits in 2^${slot.slice(1)} bytes`];
    }),
  ),
);

/** The feature set of a trace feature kind. */
export function featureSet(kind: FeatureKind): FeatureSet {
  return {
    names: kind === "loop" ? LOOP_FEATURE_NAMES : FIXED_FEATURE_NAMES,
    version: FEATURE_VERSION,
  };
}

// ---------------------------------------------------------------------------
// Kernel analysis

interface ChainLoop {
  v: string;
  extent: number;
  kind: ForKind;
}

interface StoreSite {
  store: Extract<Stmt, { k: "store" }>;
  /** Enclosing loops, outermost first (all extents). */
  chain: ChainLoop[];
  guards: number;
  /** Let definitions in scope. */
  lets: Map<string, AExpr>;
}

interface KernelFacts {
  stores: StoreSite[];
  loops: number;
  localBytes: number;
  localCount: number;
  heapCount: number;
}

function scan(kernel: Kernel): KernelFacts {
  const facts: KernelFacts = { stores: [], loops: 0, localBytes: 0, localCount: 0, heapCount: 0 };
  const chain: ChainLoop[] = [];
  const lets = new Map<string, AExpr>();
  const walk = (body: Stmt[], guards: number) => {
    for (const st of body) {
      switch (st.k) {
        case "for":
          facts.loops++;
          chain.push({ v: st.v, extent: st.extent, kind: st.kind });
          walk(st.body, guards);
          chain.pop();
          break;
        case "if":
          walk(st.body, guards + 1);
          break;
        case "let":
          lets.set(st.name, st.value); // let names are unique in a kernel
          break;
        case "alloc":
          facts.localBytes += st.size * 4;
          facts.localCount++;
          if (st.heap) facts.heapCount++;
          walk(st.body, guards);
          break;
        case "store":
          facts.stores.push({ store: st, chain: chain.slice(), guards, lets });
          break;
      }
    }
  };
  walk(kernel.body, 0);
  return facts;
}

function mainSite(stores: StoreSite[]): StoreSite | undefined {
  let best: StoreSite | undefined;
  for (const s of stores) {
    if (!best) best = s;
    else if (s.store.accumulate !== best.store.accumulate) {
      if (s.store.accumulate) best = s;
    } else if (s.chain.length > best.chain.length) best = s;
  }
  return best;
}

/** Substitutes `let` definitions (recursively) into an index expression. */
function expand(e: AExpr, lets: Map<string, AExpr>, memo: Map<string, AExpr>): AExpr {
  switch (e.k) {
    case "var": {
      const def = lets.get(e.name);
      if (!def) return e;
      let x = memo.get(e.name);
      if (!x) memo.set(e.name, x = expand(def, lets, memo));
      return x;
    }
    case "bin":
      return { k: "bin", op: e.op, a: expand(e.a, lets, memo), b: expand(e.b, lets, memo) };
    default:
      return e;
  }
}

function sameExpr(a: AExpr, b: AExpr): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** Numeric value of an int expression; variables from `vals` (absent: 0). */
function evalInt(e: AExpr, vals: Map<string, number>): number {
  switch (e.k) {
    case "int":
      return e.v;
    case "var":
      return vals.get(e.name) ?? 0;
    case "bin": {
      const a = evalInt(e.a, vals), b = evalInt(e.b, vals);
      switch (e.op) {
        case "+":
          return a + b;
        case "-":
          return a - b;
        case "*":
          return a * b;
        case "/":
          return b === 0 ? 0 : Math.floor(a / b);
        case "%":
          return b === 0 ? 0 : a - b * Math.floor(a / b);
        case "max":
          return Math.max(a, b);
        case "min":
          return Math.min(a, b);
      }
    }
  }
  return 0;
}

interface AccessInfo {
  buf: string;
  /** Per kept loop, innermost first. */
  stride: number[];
  depends: boolean[];
  /** log2 touch, log2 reuse, log2 footprint (elements), per kept loop, innermost first. */
  touch: number[];
  reuse: number[];
  footprint: number[];
}

interface Analysis {
  loop: Float32Array;
  fixed: Float32Array;
}

/** An affine form: constant plus coefficients of variables. */
interface Affine {
  c: number;
  coef: Map<string, number>;
}

/** The affine form of an int expression, or undefined when it is not affine (/, %, var * var). */
function affine(e: AExpr): Affine | undefined {
  switch (e.k) {
    case "int":
      return { c: e.v, coef: new Map() };
    case "var":
      return { c: 0, coef: new Map([[e.name, 1]]) };
    case "bin": {
      if (e.op !== "+" && e.op !== "-" && e.op !== "*") return undefined;
      const a = affine(e.a), b = affine(e.b);
      if (!a || !b) return undefined;
      if (e.op === "*") {
        const [k, x] = a.coef.size === 0 ? [a.c, b] : b.coef.size === 0 ? [b.c, a] : [NaN, a];
        if (Number.isNaN(k)) return undefined;
        for (const [v, c] of x.coef) x.coef.set(v, c * k);
        x.c *= k;
        return x;
      }
      const sign = e.op === "+" ? 1 : -1;
      for (const [v, c] of b.coef) a.coef.set(v, (a.coef.get(v) ?? 0) + sign * c);
      a.c += sign * b.c;
      return a;
    }
  }
  return undefined;
}

function analyseAccess(
  buf: string,
  index: AExpr,
  loops: ChainLoop[],
  lets: Map<string, AExpr>,
  memo: Map<string, AExpr>,
): AccessInfo {
  const ix = expand(index, lets, memo);
  const lin = affine(ix);
  const used = lin ? new Set([...lin.coef].filter(([, c]) => c !== 0).map(([v]) => v)) : varsOf(ix);
  const vals = new Map<string, number>();
  const base = lin ? 0 : evalInt(ix, vals);
  const env = new Map<string, [number, number]>();
  if (!lin) { for (const v of used) env.set(v, [0, 0]); }
  const info: AccessInfo = { buf, stride: [], depends: [], touch: [], reuse: [], footprint: [] };
  let touch = 0, reuse = 0, span = 0;
  for (const l of loops) {
    const dep = used.has(l.v);
    let stride = 0;
    if (dep && lin) {
      stride = lin.coef.get(l.v)!;
      span += Math.abs(stride) * (l.extent - 1);
    } else if (dep) {
      vals.set(l.v, 1);
      stride = evalInt(ix, vals) - base;
      vals.delete(l.v);
      env.set(l.v, [0, l.extent - 1]);
      const [lo, hi] = bounds(ix, env);
      span = hi - lo;
    }
    const lg = Math.log2(l.extent);
    if (dep) touch += lg;
    else reuse += lg;
    info.stride.push(stride);
    info.depends.push(dep);
    info.touch.push(touch);
    info.reuse.push(reuse);
    info.footprint.push(Math.min(touch, Math.log2(span + 1)));
  }
  return info;
}

/** Piecewise-linear interpolation of (xs, ys) at x, clamped at both ends. */
function interp(xs: number[], ys: number[], x: number): number {
  if (x <= xs[0]) return ys[0];
  for (let i = 1; i < xs.length; i++) {
    if (x <= xs[i]) {
      const dx = xs[i] - xs[i - 1];
      return dx <= 0 ? ys[i] : ys[i - 1] + ((x - xs[i - 1]) / dx) * (ys[i] - ys[i - 1]);
    }
  }
  return ys[ys.length - 1];
}

function analyse(trace: Trace): Analysis {
  const sch = replayTrace(trace, { prng: createPrng(0) });
  const kernel = lower(sch);
  const facts = scan(kernel);
  const gemm = gemmFeatures(sch);
  const loop = new Float32Array(LOOP_FEATURE_NAMES.length);
  const fixed = new Float32Array(FIXED_FEATURE_NAMES.length);
  const flops = sch.workload.flops;
  const kernelBytes = 4 *
    (kernel.params.reduce((a, p) => a + p.size, 0) + kernel.temps.reduce((a, t) => a + t.size, 0));
  const tempBytes = 4 * kernel.temps.reduce((a, t) => a + t.size, 0);
  let storeIters = 0;
  for (const s of facts.stores) storeIters += s.chain.reduce((a, l) => a * l.extent, 1);

  const main = mainSite(facts.stores);
  const full = main?.chain ?? [];
  const kept = full.filter((l) => l.extent > 1); // outermost first
  const inner = kept.slice().reverse(); // innermost first
  const accesses: AccessInfo[] = [];
  if (main) {
    const memo = new Map<string, AExpr>();
    const seen = new Set<object>();
    const raw = [{ buf: main.store.buf, index: main.store.index }];
    forEachLoad(main.store.value, (l) => raw.push({ buf: l.buf, index: l.index }));
    for (const a of raw) {
      // Exact duplicates (same buffer, same index) are one access.
      if (
        raw.some((b) => b.buf === a.buf && b !== a && seen.has(b) && sameExpr(a.index, b.index))
      ) {
        continue;
      }
      seen.add(a);
      accesses.push(analyseAccess(a.buf, a.index, inner, main.lets, memo));
    }
  }

  // Loop features.
  const perLoop = 6 + 3 * BUFFER_SLOTS;
  for (let k = 0; k < Math.min(LOOP_SLOTS, inner.length); k++) {
    const l = inner[k], o = k * perLoop;
    loop[o] = Math.log2(l.extent + 1);
    loop[o + 1] = inner.length - 1 - k;
    loop[o + 2 + KINDS.indexOf(l.kind)] = 1;
    for (let b = 0; b < Math.min(BUFFER_SLOTS, accesses.length); b++) {
      const a = accesses[b], p = o + 6 + 3 * b;
      loop[p] = Math.log2(Math.abs(a.stride[k]) + 1);
      loop[p + 1] = a.touch[k];
      loop[p + 2] = a.reuse[k];
    }
  }

  loop.set(gemm, LOOP_FEATURE_NAMES.length - gemm.length);

  // Fixed features: scalars.
  const iters = full.reduce((a, l) => a * l.extent, 1);
  let par = 1, vec = 1, unr = 1;
  for (const l of full) {
    if (l.kind === "parallel") par *= l.extent;
    else if (l.kind === "vectorize") vec *= l.extent;
    else if (l.kind === "unroll") unr *= l.extent;
  }
  let contiguous = 0, invariant = 0;
  if (inner.length > 0) {
    for (const a of accesses) {
      if (!a.depends[0]) invariant++;
      else if (Math.abs(a.stride[0]) === 1) contiguous++;
    }
  }
  const n = Math.max(1, accesses.length);
  const scalars: Record<string, number> = {
    "flops.log2": Math.log2(Math.max(1, flops)),
    "ai.log2": Math.log2(Math.max(1, flops) / Math.max(1, kernelBytes)),
    "main.iters.log2": Math.log2(iters),
    "main.depth": kept.length,
    "main.guards": main?.guards ?? 0,
    "main.accesses": accesses.length,
    "parallel.log2_extent": Math.log2(par),
    "parallel.utilisation": par / (CORES * Math.ceil(par / CORES)),
    "parallel.log2_work": Math.log2(iters / par),
    "vector.width": vec,
    "vector.log2_width": Math.log2(vec),
    "unroll.log2_product": Math.log2(unr),
    "innermost.log2_extent": inner.length > 0 ? Math.log2(inner[0].extent) : 0,
    "access.contiguous_frac": contiguous / n,
    "access.invariant_frac": invariant / n,
    "local.log2_bytes": Math.log2(1 + facts.localBytes),
    "local.count": facts.localCount,
    "local.heap_count": facts.heapCount,
    "temps.log2_bytes": Math.log2(1 + tempBytes),
    "loops.count": facts.loops,
    "stores.count": facts.stores.length,
    "stores.log2_iters": Math.log2(Math.max(1, storeIters)),
  };
  let at = 0;
  for (const [name] of SCALARS) fixed[at++] = scalars[name];

  // Curves: x = cumulative log2 iterations (0 before any loop), per slot log2 footprint.
  const xs = [0];
  for (const l of inner) xs.push(xs[xs.length - 1] + Math.log2(l.extent));
  const total = xs[xs.length - 1];
  const slotFp: (number[] | undefined)[] = CURVE_SLOTS.slice(0, BUFFER_SLOTS).map((_, b) =>
    accesses[b] ? [0, ...accesses[b].footprint] : undefined
  );
  // Total: per buffer the largest footprint of its accesses, summed over buffers (elements).
  const totalFp = xs.map((_, i) => {
    const perBuf = new Map<string, number>();
    for (const a of accesses) {
      const f = i === 0 ? 0 : a.footprint[i - 1];
      perBuf.set(a.buf, Math.max(perBuf.get(a.buf) ?? 0, f));
    }
    let sum = 0;
    for (const f of perBuf.values()) sum += 2 ** f;
    return Math.log2(Math.max(1, sum));
  });
  const curves = [...slotFp, accesses.length > 0 ? totalFp : undefined];
  for (const ys of curves) {
    for (const x of CURVE_POINTS) fixed[at++] = ys ? interp(xs, ys, x) + 2 : 0; // bytes
  }
  for (const ys of curves) {
    for (const x of CURVE_POINTS) fixed[at++] = ys ? Math.min(x, total) - interp(xs, ys, x) : 0;
  }
  for (const y of CACHE_POINTS) {
    const ely = y - 2; // elements
    let x = total;
    if (totalFp[0] >= ely) x = 0;
    else {
      for (let i = 1; i < xs.length; i++) {
        if (totalFp[i] >= ely) {
          const dy = totalFp[i] - totalFp[i - 1];
          x = xs[i - 1] + (dy > 0 ? (ely - totalFp[i - 1]) / dy : 0) * (xs[i] - xs[i - 1]);
          break;
        }
      }
    }
    fixed[at++] = x;
  }
  for (const v of gemm) fixed[at++] = v;
  if (at !== fixed.length) throw new Error("internal: fixed feature count mismatch");
  return { loop, fixed };
}

// ---------------------------------------------------------------------------
// Public trace features, with a cache

const CACHE_LIMIT = 20_000;
const cache = new Map<string, Analysis>();
const stats = { analyses: 0, hits: 0 };

function analysed(trace: Trace): Analysis {
  const key = JSON.stringify(trace);
  let a = cache.get(key);
  if (a) stats.hits++;
  else {
    stats.analyses++;
    a = analyse(trace);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    cache.set(key, a);
  }
  return a;
}

/**
 * Loop features of a trace (replayed with `createPrng(0)` for missing
 * decisions, then lowered); see {@link LOOP_FEATURE_NAMES}. Throws what
 * replay or lowering throws for an invalid trace.
 */
export function loopFeatures(trace: Trace): number[] {
  return Array.from(analysed(trace).loop);
}

/** Fixed-length, structure-independent features of a trace; see {@link FIXED_FEATURE_NAMES}. */
export function fixedFeatures(trace: Trace): number[] {
  return Array.from(analysed(trace).fixed);
}

/** Options of {@link featurize}. */
export interface FeaturizeOptions {
  /**
   * What to do with a trace that does not replay or lower: `"throw"` (the
   * default) rethrows, `"zeros"` leaves its row all zero.
   */
  invalid?: "throw" | "zeros";
}

/**
 * Features of many traces as a row-major float32 matrix (one row per trace),
 * for a {@link ./regressor.ts} learner. Results are cached by trace JSON.
 */
export function featurize(
  traces: readonly Trace[],
  kind: FeatureKind,
  options: FeaturizeOptions = {},
): FeatureMatrix {
  if (kind !== "loop" && kind !== "fixed") {
    throw new RangeError(`Unknown feature kind ${JSON.stringify(kind)}; known: loop, fixed`);
  }
  const names = featureSet(kind).names;
  const cols = names.length, rows = traces.length;
  const data = new Float32Array(rows * cols);
  traces.forEach((t, r) => {
    let a: Analysis;
    try {
      a = analysed(t);
    } catch (e) {
      if (options.invalid === "zeros") return;
      throw e;
    }
    data.set(kind === "loop" ? a.loop : a.fixed, r * cols);
  });
  return { data, rows, cols, names: [...names], version: FEATURE_VERSION };
}

/**
 * How often the feature cache computed an analysis (replay and lowering of a
 * trace) and how often it answered from memory, since the process started:
 * the work featurizing does, counted independently of the machine's speed.
 *
 * @example
 * ```ts
 * const { analyses, hits } = featureCacheStats();
 * console.log(`${analyses} traces lowered, ${hits} cache hits`);
 * ```
 */
export function featureCacheStats(): { analyses: number; hits: number } {
  return { ...stats };
}

/** Empties the feature cache (for benchmarks and long runs). */
export function clearFeatureCache(): void {
  cache.clear();
}
