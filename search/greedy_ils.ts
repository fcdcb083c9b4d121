/**
 * Greedy iterated local search (Kernel Tuner's `greedy_ils`): greedy descent
 * (first improvement over the Hamming neighbourhood, in random order) to a
 * local minimum; then a random walk that changes a share of the knobs, and
 * descent again; the better local minimum becomes the base. After
 * `noImprovement` walks without a better base the search restarts from the
 * best of a few fresh random points.
 *
 * @example
 * ```ts
 * import { greedyIls } from "./greedy_ils.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [0, 1, 2, 3] }]);
 * const s = greedyIls(space, { seed: 1 });
 * if (s.propose(4).length === 0) throw new Error();
 * ```
 * @module
 */
import type { KnobSpace, Point } from "../ir/knobs.ts";
import {
  bestOfSample,
  greedyDescent,
  otherOption,
  type StepContext,
  type StepwiseOptions,
  stepwiseStrategy,
} from "./stepwise.ts";
import type { Strategy } from "./strategy.ts";

/** Options of {@link greedyIls}. */
export interface GreedyIlsOptions extends StepwiseOptions {
  /** Random points the search (and each restart) starts from the best of. Default 10 (5 fell below random search at 25-100 evaluations on the small CPU layers). */
  init?: number;
  /** Share of the knobs a random walk changes (at least one). Default 0.3 (Kernel Tuner's `random_walk`). */
  randomWalk?: number;
  /** Walks in a row without a better base before a restart. Default 8. */
  noImprovement?: number;
  /** Neighbourhood of the descent. Default `"hamming"` (Kernel Tuner's default). */
  neighbour?: "adjacent" | "hamming";
}

/** Changes `k` distinct random knobs (with more than one option) to another option; a valid point when it finds one. */
export function randomWalk(ctx: StepContext, p: Point, k: number, tries = 20): Point {
  const active = ctx.space.knobs.flatMap((kn, j) => kn.options.length > 1 ? [j] : []);
  let q = p;
  for (let t = 0; t < tries; t++) {
    q = [...p];
    const pool = [...active];
    for (let s = 0; s < Math.min(k, pool.length); s++) {
      const j = pool.splice(ctx.prng.int(pool.length), 1)[0];
      q[j] = otherOption(ctx.space, p, j, ctx.prng);
    }
    if (ctx.space.isValid(q)) return q;
  }
  return q;
}

/** Greedy iterated local search over a knob space. */
export function greedyIls(space: KnobSpace, o: GreedyIlsOptions): Strategy {
  const init = o.init ?? 10;
  const share = o.randomWalk ?? 0.3;
  const patience = o.noImprovement ?? 8;
  const kind = o.neighbour ?? "hamming";
  const active = space.knobs.filter((k) => k.options.length > 1).length;
  const steps = Math.max(1, Math.round(share * active));
  return stepwiseStrategy("greedy_ils", space, o, function* (ctx) {
    const start = yield* bestOfSample(ctx, init);
    if (!start) return;
    let base = yield* greedyDescent(ctx, start, kind);
    for (let stale = 0; stale < patience;) {
      const q = randomWalk(ctx, base.point, steps);
      const c = ctx.known(q) ?? (yield [q])[0];
      const local = yield* greedyDescent(ctx, { point: q, cost: c }, kind);
      if (local.cost < base.cost) {
        base = local;
        stale = 0;
      } else stale++;
    }
  });
}
