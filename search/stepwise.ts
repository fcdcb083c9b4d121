/**
 * Sequential search algorithms written as plain loops, turned into ask/tell
 * strategies. An algorithm is a generator that yields the points it wants
 * evaluated and receives their costs (seconds; Infinity for a failure or an
 * invalid point), the way Kernel Tuner's strategies call their cost function.
 * The adapter answers points measured before (by anyone) and points the space
 * rejects without spending an evaluation, proposes the others, and resumes
 * the generator once all of a yielded batch are measured. This is how the
 * field's baselines (greedy_ils, basin_hopping, dual_annealing, diff_evo, pso)
 * stay short and still run against a real runner, a replay or a notebook.
 *
 * @example
 * ```ts
 * import { stepwiseStrategy } from "./stepwise.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [0, 1, 2, 3] }]);
 * // Walks x = 0, 1, 2, 3 in order, one evaluation at a time.
 * const s = stepwiseStrategy("walk", space, { seed: 1 }, function* () {
 *   for (let x = 0; x < 4; x++) yield [[x]];
 * });
 * const [c] = s.propose(4);
 * if (c.knobs![0] !== 0) throw new Error();
 * ```
 * @module
 */
import { createPrng, type Prng } from "../ir/prng.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import { freshPointSampler, knobIndex, observedCost } from "./random.ts";
import type { Candidate, CandidateOf, Observation, Strategy } from "./strategy.ts";

/** An algorithm: yields batches of points, receives one cost per point (Infinity: failed or invalid). */
export type SearchLoop = Generator<Point[], void, number[]>;

/** What an algorithm's body may use. */
export interface StepContext {
  space: KnobSpace;
  prng: Prng;
  /** A uniformly random valid point never drawn, proposed or measured before; undefined when none is left. */
  fresh(): Point | undefined;
  /** The measured cost of a point (Infinity: failed or invalid), or undefined when not measured. */
  known(p: Point): number | undefined;
  /** Best measured point and cost so far (point undefined before the first valid measurement). */
  best(): { point?: Point; cost: number };
  /**
   * Points measured before this strategy's first proposal (by others: a portfolio's shared
   * initial design) that no initial design has counted yet; reading the number counts them.
   */
  takeShared(): number;
}

/** Options of {@link stepwiseStrategy}. */
export interface StepwiseOptions {
  seed: number;
  candidateOf?: CandidateOf;
}

/** Resumes without a new point in a row after which the body is restarted. */
const MAX_FREE = 2000;
/** Answers from the records between two yields after which the body is restarted (it is stuck). */
const MAX_KNOWN = 20000;

/** Thrown into a body that keeps reading known points without yielding. */
class Stuck extends Error {}

/**
 * Turns a search loop into a strategy. When the loop returns (or keeps
 * yielding only known points), it is started again; when the loop waits on
 * points in flight and nothing else can be proposed, fresh random points are
 * proposed so that `propose` returns something. Proposes fewer than asked
 * only once every valid point has been proposed.
 */
export function stepwiseStrategy(
  name: string,
  space: KnobSpace,
  o: StepwiseOptions,
  body: (ctx: StepContext) => SearchLoop,
): Strategy {
  const candidateOf = o.candidateOf ?? ((knobs: number[]) => ({ knobs }));
  const prng = createPrng(o.seed);
  const costs = new Map<number, number>();
  const proposed = new Set<number>();
  const drawn = new Set<number>();
  const sampler = freshPointSampler(space, prng, drawn);
  let bestPoint: Point | undefined, bestCost = Infinity;
  let reads = 0;
  let shared = 0, started = false;
  const ctx: StepContext = {
    space,
    prng,
    fresh: () => sampler.next(),
    known: (p) => {
      if (++reads > MAX_KNOWN) throw new Stuck("the search loop only revisits known points");
      return costs.get(space.index(p)) ?? (space.isValid(p) ? undefined : Infinity);
    },
    best: () => ({ point: bestPoint && [...bestPoint], cost: bestCost }),
    takeShared: () => {
      const k = shared;
      shared = 0;
      return k;
    },
  };
  let loop = body(ctx);
  let batch: Point[] | undefined;

  /** Resumes the loop while its batch is fully known; returns the points still to measure. */
  const advance = (): Point[] | undefined => {
    for (let free = 0; free < MAX_FREE; free++) {
      reads = 0;
      if (batch) {
        const answers = batch.map((p) => ctx.known(p));
        if (answers.some((a) => a === undefined)) {
          return batch.filter((p) => ctx.known(p) === undefined);
        }
      }
      let r: IteratorResult<Point[], void>;
      try {
        r = loop.next(batch ? batch.map((p) => ctx.known(p)!) : []);
      } catch (e) {
        if (!(e instanceof Stuck)) throw e;
        r = { done: true, value: undefined };
      } finally {
        reads = 0;
      }
      if (r.done) {
        loop = body(ctx);
        batch = undefined;
        continue;
      }
      batch = r.value.map((p) => [...p]);
    }
    return undefined;
  };

  return {
    name,
    propose(n: number): Candidate[] {
      const out: Candidate[] = [];
      if (!started) [started, shared] = [true, costs.size];
      const want = advance();
      for (const p of want ?? []) {
        const i = space.index(p);
        if (out.length >= n || proposed.has(i)) continue;
        proposed.add(i);
        drawn.add(i);
        out.push(candidateOf(p));
      }
      if (out.length === 0) {
        // The loop waits on points in flight (or is stuck): keep the driver busy.
        const p = sampler.next();
        if (p) {
          proposed.add(space.index(p));
          out.push(candidateOf(p));
        }
      }
      return out;
    },
    observe(observations: Observation[]): void {
      for (const ob of observations) {
        const i = knobIndex(space, ob.candidate.knobs);
        if (i === undefined) continue;
        const c = observedCost(ob);
        costs.set(i, c);
        proposed.add(i);
        drawn.add(i);
        if (c < bestCost) [bestCost, bestPoint] = [c, space.point(i)];
      }
    },
  };
}

/** Points that differ from `p` in one knob: by one option (`"adjacent"`) or by any (`"hamming"`). */
export function neighbourhood(space: KnobSpace, p: Point, kind: "adjacent" | "hamming"): Point[] {
  if (kind === "adjacent") return space.neighbours(p);
  return space.knobs.flatMap((k, j) =>
    k.options.flatMap((_, v) => v === p[j] ? [] : [p.map((x, i) => (i === j ? v : x))])
  );
}

/**
 * Another option of knob `j` than the one `p` holds, drawn uniformly (the
 * knob must have more than one option).
 */
export function otherOption(space: KnobSpace, p: Point, j: number, prng: Prng): number {
  const v = prng.int(space.knobs[j].options.length - 1);
  return v >= p[j] ? v + 1 : v;
}

/** Shuffles in place (Fisher-Yates) and returns the array. */
export function shuffled<T>(xs: T[], prng: Prng): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

/**
 * The best of `n` fresh random points (the small initial design every local
 * method starts from, so none is worse than random at small budgets).
 * Points measured by others before the strategy's first proposal
 * ({@link StepContext.takeShared}) count among the `n`.
 * Yields them as one batch; returns the best point and its cost (the first
 * point when all failed; undefined when the space is exhausted).
 */
export function* bestOfSample(
  ctx: StepContext,
  n: number,
): Generator<Point[], { point: Point; cost: number } | undefined, number[]> {
  const b0 = ctx.best();
  const draw = b0.point ? n - ctx.takeShared() : n;
  if (draw <= 0 && b0.point) return { point: b0.point, cost: b0.cost };
  const pts: Point[] = [];
  for (let i = 0; i < draw; i++) {
    const p = ctx.fresh();
    if (p) pts.push(p);
  }
  if (pts.length === 0) return undefined;
  const cs = yield pts;
  let k = 0;
  for (let i = 1; i < pts.length; i++) if (cs[i] < cs[k]) k = i;
  const b = ctx.best();
  if (b.point && b.cost < cs[k]) return { point: b.point, cost: b.cost };
  return { point: pts[k], cost: cs[k] };
}

/**
 * Greedy descent from `start` (first improvement, neighbours in random
 * order, Kernel Tuner's greedy hill climbing): yields one neighbour at a
 * time; returns the local minimum reached and its cost.
 */
export function* greedyDescent(
  ctx: StepContext,
  start: { point: Point; cost: number },
  kind: "adjacent" | "hamming" = "hamming",
): Generator<Point[], { point: Point; cost: number }, number[]> {
  let cur = start;
  for (let improved = true; improved;) {
    improved = false;
    for (const q of shuffled(neighbourhood(ctx.space, cur.point, kind), ctx.prng)) {
      const known = ctx.known(q);
      const c = known ?? (yield [q])[0];
      if (c < cur.cost) {
        cur = { point: q, cost: c };
        improved = true;
        break;
      }
    }
  }
  return cur;
}
