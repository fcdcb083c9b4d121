/**
 * Test helpers for the IR: a generator of random legal schedules, used by
 * property tests that compile and run every schedule against the reference,
 * and a check that a schedule's trace round-trips through JSON.
 *
 * @example
 * ```ts
 * import { randomSchedule } from "./testing.ts";
 * import { lower } from "./lower.ts";
 * import { createPrng } from "./prng.ts";
 * import { matmul } from "./workloads.ts";
 * const sch = randomSchedule(matmul(37, 29, 23), createPrng(7));
 * lower(sch); // never throws: randomSchedule only returns schedules that lower
 * ```
 * @module
 */
import assert from "node:assert/strict";
import { generateC } from "./codegen_c.ts";
import { ScheduleError } from "./errors.ts";
import { lower } from "./lower.ts";
import { createPrng, type Prng } from "./prng.ts";
import { MAX_VECTOR_EXTENT, Schedule } from "./schedule.ts";
import { readsOf } from "./stage.ts";
import { holderIn, type Stage } from "./stage.ts";
import { Expr } from "./te.ts";
import { canonicalJSON, parseTrace, replayTrace, traceOf } from "./trace.ts";
import type { Workload } from "./workloads.ts";

/** Counters {@link randomSchedule} adds to, when given. */
export interface RandomScheduleStats {
  /** Schedules returned. */
  schedules: number;
  /** Whole schedules thrown away because `lower()` rejected them (ScheduleError). */
  lowerRetries: number;
  /** Why `lower()` rejected them: messages with names and numbers blanked, counted. */
  lowerErrors: Record<string, number>;
  /** Primitives that threw ScheduleError when attempted (and were skipped). */
  rejectedPrimitives: number;
  /** Primitives applied, by op name (as recorded in the trace). */
  applied: Record<string, number>;
}

/** Creates zeroed {@link RandomScheduleStats}. */
export function newRandomScheduleStats(): RandomScheduleStats {
  return { schedules: 0, lowerRetries: 0, lowerErrors: {}, rejectedPrimitives: 0, applied: {} };
}

/** Options of {@link randomSchedule}. */
export interface RandomScheduleOptions {
  /** Probability of starting with `cacheWrite` on the reduction stage. Default 0.3. */
  cacheWriteProbability?: number;
  /** Probability of starting with `fuseAxes` of two axes of the output. Default 0.15. */
  fuseAxesProbability?: number;
  /** Primitives to apply after the optional cache_write. Default: 3 to 14, drawn. */
  steps?: number;
  /** Fresh schedules to try before giving up when `lower()` keeps rejecting them. Default 100. */
  maxAttempts?: number;
  /** Counters to add to. */
  stats?: RandomScheduleStats;
}

/** The primitives {@link randomSchedule} draws from, with their weights. */
const KINDS: [Kind, number][] = [
  ["split", 4],
  ["fuse", 1.5],
  ["reorder", 2],
  ["parallel", 1],
  ["vectorize", 1.2],
  ["unroll", 0.8],
  ["autoUnroll", 0.6],
  ["computeAt", 3],
  ["computeInline", 1],
  ["computeRoot", 0.4],
  ["cacheRead", 0.7],
];
type Kind =
  | "split"
  | "fuse"
  | "reorder"
  | "parallel"
  | "vectorize"
  | "unroll"
  | "autoUnroll"
  | "computeAt"
  | "computeInline"
  | "computeRoot"
  | "cacheRead";

/** Largest extent `randomSchedule` unrolls explicitly (keeps compile times small). */
const MAX_RANDOM_UNROLL = 16;
/** Attempts per step before the step is skipped. */
const TRIES_PER_STEP = 6;

/**
 * Applies a random sequence of primitives to a fresh {@link Schedule} of `w`:
 * optionally `cacheWrite` on the reduction stage first, then splits (2 to 4
 * levels, factors that need not divide the extent, sometimes a `null` factor),
 * fuses of adjacent loops of one kind, reorders, `parallel`, `vectorize` of
 * the innermost loop, `unroll` of small loops, `autoUnroll`, `computeAt` into
 * a random leaf loop of the consumer (for a packed copy, sometimes of a stage
 * its reader is computed in), `computeInline`, `computeRoot`, and
 * `cacheRead(..., "global")` of a tensor a stage reads, often followed by
 * `transformLayout` or `deinterleave` of one dimension; first, sometimes,
 * `fuseAxes` of two consecutive axes of the output.
 * A primitive that throws ScheduleError is skipped and another one tried. The
 * result always lowers: when `lower()` throws ScheduleError, a new schedule is
 * drawn (counted in `options.stats.lowerRetries`). Deterministic in `prng`.
 */
export function randomSchedule(
  w: Workload,
  prng: Prng,
  options: RandomScheduleOptions = {},
): Schedule {
  const maxAttempts = options.maxAttempts ?? 100;
  const stats = options.stats;
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const sch = new Schedule(w, { prng: prng.fork() });
    const rejected = build(sch, prng, options);
    if (stats) stats.rejectedPrimitives += rejected;
    try {
      lower(sch);
    } catch (e) {
      if (!(e instanceof ScheduleError)) throw e;
      if (stats) {
        stats.lowerRetries++;
        const why = e.message.replace(/"[^"]*"/g, '"…"').replace(/\d+/g, "N");
        stats.lowerErrors[why] = (stats.lowerErrors[why] ?? 0) + 1;
      }
      continue;
    }
    if (stats) {
      stats.schedules++;
      for (const inst of sch.trace) stats.applied[inst.op] = (stats.applied[inst.op] ?? 0) + 1;
    }
    return sch;
  }
  throw new Error(`randomSchedule: no schedule of "${w.name}" lowered in ${maxAttempts} attempts`);
}

/** Applies the random primitives; returns how many attempts were rejected. */
function build(sch: Schedule, prng: Prng, options: RandomScheduleOptions): number {
  let rejected = 0;
  const attempt = (f: () => void): boolean => {
    try {
      f();
      return true;
    } catch (e) {
      if (!(e instanceof ScheduleError)) throw e;
      rejected++;
      return false;
    }
  };
  // Sometimes the output's first two consecutive spatial axes merged into one (fuse_axes).
  const out = sch.stages.find((s) => s.isOutput && s.axes.length >= 2);
  if (out && prng.next() < (options.fuseAxesProbability ?? 0.15)) {
    const at = prng.int(out.axes.length - 1);
    attempt(() => void sch.fuseAxes(out.name, [out.axes[at].name, out.axes[at + 1].name]));
  }
  const red = sch.stages.find((s) => !(s.body instanceof Expr) && s.scope === "global");
  if (red && prng.next() < (options.cacheWriteProbability ?? 0.3)) {
    attempt(() => sch.cacheWrite(red.name));
  }
  const steps = options.steps ?? 3 + prng.int(12);
  const total = KINDS.reduce((a, [, wt]) => a + wt, 0);
  for (let step = 0; step < steps; step++) {
    for (let t = 0; t < TRIES_PER_STEP; t++) {
      let r = prng.next() * total, kind: Kind = KINDS[0][0];
      for (const [k, wt] of KINDS) {
        r -= wt;
        if (r < 0) {
          kind = k;
          break;
        }
      }
      const f = primitive(sch, kind, prng);
      if (f && attempt(f)) break;
    }
  }
  return rejected;
}

/** A random instance of primitive `kind`, or undefined when nothing fits. */
function primitive(sch: Schedule, kind: Kind, prng: Prng): (() => void) | undefined {
  const live = sch.stages.filter((s) => s.attach.k !== "inline");
  const s = prng.pick(live);
  const leaves = s.leaves;
  switch (kind) {
    case "split": {
      const l = prng.pick(leaves);
      if (prng.next() < 0.2) {
        // A sampled perfect tile, referred to by the split (a decision in the trace).
        const n = 2 + prng.int(3), maxInner = prng.pick([4, 16, 64]);
        return () =>
          void sch.split(s.name, l.name, sch.samplePerfectTile(s.name, l.name, n, maxInner));
      }
      const factors = splitFactors(l.extent, prng);
      return () => void sch.split(s.name, l.name, factors);
    }
    case "fuse": {
      const runs: string[][] = [];
      for (let i = 0; i + 1 < leaves.length; i++) {
        for (let n = 2; n <= 3 && i + n <= leaves.length; n++) {
          const run = leaves.slice(i, i + n);
          if (run.every((l) => l.kind === run[0].kind)) runs.push(run.map((l) => l.name));
        }
      }
      if (runs.length === 0) return undefined;
      const run = prng.pick(runs);
      return () => void sch.fuse(s.name, run);
    }
    case "reorder": {
      if (leaves.length < 2) return undefined;
      const names = shuffle(leaves.map((l) => l.name), prng);
      const subset = names.slice(0, 2 + prng.int(leaves.length - 1));
      return () => sch.reorder(s.name, subset);
    }
    case "parallel": {
      const spatial = leaves.filter((l) => l.kind === "spatial");
      if (spatial.length === 0) return undefined;
      // Prefer outer loops, as real schedules do.
      const l = spatial[prng.int(Math.min(spatial.length, 1 + prng.int(3)))];
      return () => sch.parallel(s.name, l.name);
    }
    case "vectorize": {
      const l = leaves[leaves.length - 1];
      if (l.kind !== "spatial" || l.extent > MAX_VECTOR_EXTENT) return undefined;
      return () => sch.vectorize(s.name, l.name);
    }
    case "unroll": {
      const small = leaves.filter((l) => l.extent <= MAX_RANDOM_UNROLL);
      if (small.length === 0) return undefined;
      const l = prng.pick(small);
      return () => sch.unroll(s.name, l.name);
    }
    case "autoUnroll": {
      const steps = [0, 4, 16, 64, 256];
      if (prng.next() < 0.5) {
        return () => sch.autoUnroll(s.name, sch.sampleCategorical(steps, [1, 1, 2, 2, 1]));
      }
      const step = prng.pick(steps);
      return () => sch.autoUnroll(s.name, step);
    }
    case "computeAt": {
      // compute_at needs a producer whose loops are untouched (it resizes them).
      const producers = live.filter((p) => !p.isOutput && !p.touched);
      if (producers.length === 0) return undefined;
      const p = prng.pick(producers);
      const consumers = sch.consumers(p);
      if (consumers.length !== 1) return undefined;
      const c = consumers[0];
      if (p.packed && c.attach.k === "at" && prng.next() < 0.6) {
        // A packed copy further out: at a loop of a stage its reader is computed in.
        const outer = c.attach.stage;
        const held = holderIn(c, outer)!;
        const l = prng.pick(outer.leaves.slice(0, outer.leaves.indexOf(held.loop) + 1));
        return () => sch.computeAt(p.name, outer.name, l.name);
      }
      if (prng.next() < 0.3) {
        // A sampled location: root, inline (if legal) or a loop of the consumer.
        return () => sch.computeAt(p.name, c.name, sch.sampleComputeLocation(p.name));
      }
      const l = prng.pick(c.leaves);
      return () => sch.computeAt(p.name, c.name, l.name);
    }
    case "computeInline": {
      const ew = live.filter((p) => !p.isOutput && p.body instanceof Expr);
      if (ew.length === 0) return undefined;
      const p = prng.pick(ew);
      return () => sch.computeInline(p.name);
    }
    case "cacheRead": {
      const reads = readsOf(s);
      if (reads.length === 0 || s.scope === "shared") return undefined;
      const t = prng.pick(reads);
      const tile = prng.next() < 0.7;
      const rank = sch.workload.inputs.find((x) => x.name === t)?.shape.length ??
        sch.stage(t).shape.length;
      const axis = prng.int(rank), factor = prng.pick([2, 3, 4, 6, 8, 16]);
      const phases = tile && prng.next() < 0.3;
      return () => {
        const copy = sch.cacheRead(t, "global", [s.name]);
        if (phases) sch.deinterleave(copy, axis, factor);
        else if (tile) sch.transformLayout(copy, axis, factor);
      };
    }
    case "computeRoot": {
      const placed = sch.stages.filter((p: Stage) => p.attach.k !== "root");
      if (placed.length === 0) return undefined;
      const p = prng.pick(placed);
      return () => sch.computeRoot(p.name);
    }
  }
}

/**
 * Factors for splitting a loop of `extent`, outermost first: 2 to 4 levels;
 * inner factors drawn up to a little beyond what remains (so tiles are often
 * imperfect); the outermost (or, rarely, another) factor `null` or just
 * enough (sometimes one more) to cover the extent.
 */
export function splitFactors(extent: number, prng: Prng): (number | null)[] {
  const n = 2 + prng.int(3);
  const inner: number[] = [];
  let covered = 1;
  for (let i = 1; i < n; i++) {
    const remaining = Math.ceil(extent / covered);
    const f = 1 + prng.int(Math.min(remaining, 16) + 1);
    inner.unshift(f);
    covered *= f;
  }
  const factors: (number | null)[] = [0, ...inner];
  const roll = prng.next();
  if (roll < 0.4) {
    factors[0] = null;
  } else if (roll < 0.5) {
    // The null elsewhere: the outermost gets a fixed factor instead.
    const at = 1 + prng.int(n - 1);
    const fixed = factors[at] as number;
    factors[at] = null;
    factors[0] = 1 + prng.int(Math.max(1, Math.ceil(extent / (covered / fixed))));
  } else {
    factors[0] = Math.ceil(extent / covered) + (prng.next() < 0.15 ? 1 : 0);
  }
  return factors;
}

function shuffle<T>(xs: T[], prng: Prng): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Asserts that a schedule's trace survives JSON: serialising, parsing
 * ({@link parseTrace}) and replaying it with another PRNG (decisions are in
 * the trace) gives the same trace and lowers to the same C.
 */
export function assertTraceRoundTrip(sch: Schedule): void {
  const trace = traceOf(sch);
  const parsed = parseTrace(JSON.stringify(trace));
  assert.equal(canonicalJSON(parsed), canonicalJSON(trace), "parseTrace changed the trace");
  const again = replayTrace(parsed, { prng: createPrng(0x5eed) });
  assert.equal(
    canonicalJSON(traceOf(again)),
    canonicalJSON(trace),
    "the replayed schedule recorded another trace",
  );
  assert.equal(generateC(lower(again)), generateC(lower(sch)), "the replay lowers to other C");
}
