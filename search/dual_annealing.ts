/**
 * Dual annealing (Kernel Tuner's `dual_annealing`, after scipy's
 * `dual_annealing`: generalized simulated annealing of Tsallis and Stariolo
 * with a local search), on a knob space. Knobs are continuous coordinates
 * in [0, options) read by their floor. Each iteration runs a Markov chain of
 * 2·d moves (d: knobs with more than one option): the first d move every knob
 * at once, the next d one knob each, by steps of the heavy-tailed Tsallis
 * visiting distribution (qv = 2.62) at the visiting temperature
 * T(t) = T0·(2^(qv−1) − 1)/((1 + t)^(qv−1) − 1), wrapped into the range. A
 * worse state is accepted with the generalized Metropolis probability
 * (qa = −5) on the relative cost change. When a chain improves the best, a
 * greedy descent (the local search) starts from it. The temperature restarts
 * when it falls below 2e-5·T0.
 *
 * @example
 * ```ts
 * import { dualAnnealing } from "./dual_annealing.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [0, 1, 2, 3] }]);
 * if (dualAnnealing(space, { seed: 1 }).propose(4).length === 0) throw new Error();
 * ```
 * @module
 */
import type { Prng } from "../ir/prng.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import { bestOfSample, greedyDescent, type StepwiseOptions, stepwiseStrategy } from "./stepwise.ts";
import type { Strategy } from "./strategy.ts";

/** Options of {@link dualAnnealing}. */
export interface DualAnnealingOptions extends StepwiseOptions {
  /** Random points the search starts from the best of. Default 10 (as `greedy_ils` and `basin_hopping`). */
  init?: number;
  /** Initial visiting temperature. Default 5230 (scipy). */
  t0?: number;
  /** Visiting parameter qv. Default 2.62 (scipy). */
  visit?: number;
  /** Acceptance parameter qa. Default −5 (scipy). */
  accept?: number;
}

/** ln Γ(x) for x > 0 (Lanczos). */
function gammaln(x: number): number {
  const g = [
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - gammaln(1 - x);
  x -= 1;
  let a = 0.99999999999980993;
  const t = x + 7.5;
  for (let i = 0; i < 8; i++) a += g[i] / (x + i + 1);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

/** A standard normal draw (Box-Muller). */
function normal(prng: Prng): number {
  const u = 1 - prng.next(), v = prng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** One step of the Tsallis visiting distribution at temperature `t` (scipy's VisitingDistribution). */
export function visitStep(prng: Prng, qv: number, t: number): number {
  const f1 = Math.exp(Math.log(t) / (qv - 1));
  const f2 = Math.exp((4 - qv) * Math.log(qv - 1));
  const f3 = Math.exp((2 - qv) * Math.log(2) / (qv - 1));
  const f4 = Math.sqrt(Math.PI) * f1 * f2 / (f3 * (3 - qv));
  const f5 = 1 / (qv - 1) - 0.5;
  const f6 = Math.PI * (1 - f5) / Math.sin(Math.PI * (1 - f5)) / Math.exp(gammaln(2 - f5));
  const sigma = Math.exp(-(qv - 1) * Math.log(f6 / f4) / (3 - qv));
  const x = sigma * normal(prng);
  const den = Math.exp((qv - 1) * Math.log(Math.abs(normal(prng)) + 1e-300) / (3 - qv));
  return x / den;
}

/** Dual annealing over a knob space. */
export function dualAnnealing(space: KnobSpace, o: DualAnnealingOptions): Strategy {
  const t0 = o.t0 ?? 5230, qv = o.visit ?? 2.62, qa = o.accept ?? -5;
  const ranges = space.knobs.map((k) => k.options.length);
  const active = ranges.flatMap((r, j) => r > 1 ? [j] : []);
  const pointOf = (x: number[]): Point => x.map((v, j) => Math.min(ranges[j] - 1, Math.floor(v)));
  return stepwiseStrategy("dual_annealing", space, o, function* (ctx) {
    const start = yield* bestOfSample(ctx, o.init ?? 10);
    if (!start) return;
    let x = start.point.map((v) => v + ctx.prng.next());
    let e = start.cost;
    let best = yield* greedyDescent(ctx, start);
    const move = (j: number, t: number) => {
      const s = visitStep(ctx.prng, qv, t);
      const v = Math.abs(s) > 1e8 ? ctx.prng.next() * ranges[j] : x[j] + s;
      x[j] = ((v % ranges[j]) + ranges[j]) % ranges[j];
    };
    for (let it = 1;; it++) {
      const t = t0 * (2 ** (qv - 1) - 1) / ((1 + it) ** (qv - 1) - 1);
      if (t < 2e-5 * t0) return; // restart: the body starts again
      const tAccept = t / (it + 1);
      let improved = false;
      for (let step = 0; step < 2 * active.length; step++) {
        const old = [...x];
        if (step < active.length) { for (const j of active) move(j, t); }
        else move(active[step - active.length], t);
        const p = pointOf(x);
        const c = ctx.known(p) ?? (yield [p])[0];
        if (c < best.cost) {
          best = { point: p, cost: c };
          improved = true;
        }
        const rel = Number.isFinite(e) ? (c - e) / e : -1;
        let ok = rel <= 0;
        if (!ok && Number.isFinite(c)) {
          const base = 1 - (1 - qa) * rel / tAccept;
          ok = base > 0 && ctx.prng.next() <= Math.exp(Math.log(base) / (1 - qa));
        }
        if (ok) e = c;
        else x = old;
      }
      if (improved) {
        best = yield* greedyDescent(ctx, best);
        x = best.point.map((v) => v + ctx.prng.next());
        e = best.cost;
      }
    }
  });
}
