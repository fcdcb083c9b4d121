/**
 * Basin hopping (Kernel Tuner's `basin_hopping`, after scipy's
 * `basinhopping`), on a knob space: from a local minimum, jump by a random
 * displacement of every knob (uniform, up to `stepSize` of its range), descend
 * greedily to the next local minimum, and accept it by the Metropolis rule on
 * the relative cost change at temperature `temperature`. Starts from the best
 * of a few random points.
 *
 * @example
 * ```ts
 * import { basinHopping } from "./basin_hopping.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [0, 1, 2, 3] }]);
 * if (basinHopping(space, { seed: 1 }).propose(4).length === 0) throw new Error();
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

/** Options of {@link basinHopping}. */
export interface BasinHoppingOptions extends StepwiseOptions {
  /** Random points the search starts from the best of. Default 10 (5 fell below random search at 25 evaluations on the small CPU layers). */
  init?: number;
  /** Largest displacement of a knob in a hop, as a share of its options. Default 0.3. */
  stepSize?: number;
  /** Metropolis temperature on relative cost changes. Default 0.1. */
  temperature?: number;
}

/** Every knob moved by a uniform random displacement of up to `step` of its range (at least one moves). */
function hop(ctx: StepContext, p: Point, step: number, tries = 20): Point {
  let q = p;
  for (let t = 0; t < tries; t++) {
    q = p.map((v, j) => {
      const r = ctx.space.knobs[j].options.length;
      const d = Math.round((2 * ctx.prng.next() - 1) * step * (r - 1));
      return Math.min(r - 1, Math.max(0, v + d));
    });
    if (q.every((v, j) => v === p[j])) {
      const active = ctx.space.knobs.flatMap((k, j) => k.options.length > 1 ? [j] : []);
      if (active.length === 0) return q;
      const j = ctx.prng.pick(active);
      q[j] = otherOption(ctx.space, p, j, ctx.prng);
    }
    if (ctx.space.isValid(q)) return q;
  }
  return q;
}

/** Basin hopping over a knob space. */
export function basinHopping(space: KnobSpace, o: BasinHoppingOptions): Strategy {
  const step = o.stepSize ?? 0.3;
  const temp = o.temperature ?? 0.1;
  return stepwiseStrategy("basin_hopping", space, o, function* (ctx) {
    const start = yield* bestOfSample(ctx, o.init ?? 10);
    if (!start) return;
    let cur = yield* greedyDescent(ctx, start);
    for (;;) {
      const q = hop(ctx, cur.point, step);
      const c = ctx.known(q) ?? (yield [q])[0];
      const next = yield* greedyDescent(ctx, { point: q, cost: c });
      const rel = Number.isFinite(cur.cost) ? (next.cost - cur.cost) / cur.cost : -1;
      if (rel <= 0 || ctx.prng.next() < Math.exp(-rel / temp)) cur = next;
    }
  });
}
