/**
 * Differential evolution (Kernel Tuner's `diff_evo`, after scipy's
 * `differential_evolution` with its default "best1bin"), on a knob space.
 * Knobs are coordinates in [0, 1) read as option floor(x·options). The
 * first population is a Latin hypercube; each generation every member i
 * gets a trial: mutant = best + F·(r1 − r2) with F drawn in [0.5, 1) per
 * generation (dither), binomial crossover with rate CR (one knob always from
 * the mutant), clipped to the range; the trial replaces member i when not
 * worse. A generation's trials are one batch (scipy's deferred updating).
 *
 * @example
 * ```ts
 * import { differentialEvolution } from "./diff_evo.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [0, 1, 2, 3] }]);
 * if (differentialEvolution(space, { seed: 1 }).propose(4).length === 0) throw new Error();
 * ```
 * @module
 */
import type { Prng } from "../ir/prng.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import { type StepwiseOptions, stepwiseStrategy } from "./stepwise.ts";
import type { Strategy } from "./strategy.ts";

/** Options of {@link differentialEvolution}. */
export interface DiffEvoOptions extends StepwiseOptions {
  /** Members of the population. Default 10 (small, for budgets of 25-400). */
  populationSize?: number;
  /** Crossover rate CR. Default 0.7 (scipy's `recombination`). */
  crossover?: number;
}

/** A Latin hypercube of `n` points in [0, 1)^d. */
export function latinHypercube(n: number, d: number, prng: Prng): number[][] {
  const cols = Array.from({ length: d }, () => {
    const perm = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = prng.int(i + 1);
      [perm[i], perm[j]] = [perm[j], perm[i]];
    }
    return perm.map((k) => (k + prng.next()) / n);
  });
  return Array.from({ length: n }, (_, i) => cols.map((c) => c[i]));
}

/** The point of unit coordinates: option floor(x·options) of each knob. */
export function pointOfUnit(space: KnobSpace, x: readonly number[]): Point {
  return x.map((v, j) => {
    const r = space.knobs[j].options.length;
    return Math.min(r - 1, Math.max(0, Math.floor(v * r)));
  });
}

/** Differential evolution (best/1/bin) over a knob space. */
export function differentialEvolution(space: KnobSpace, o: DiffEvoOptions): Strategy {
  const np = Math.max(4, o.populationSize ?? 10);
  const cr = o.crossover ?? 0.7;
  const d = space.knobs.length;
  return stepwiseStrategy("diff_evo", space, o, function* (ctx) {
    const pop = latinHypercube(np, d, ctx.prng);
    let cost = yield pop.map((x) => pointOfUnit(space, x));
    // A population that only revisits known points has converged: the body then restarts.
    for (let stale = 0; stale < 3;) {
      let b = 0;
      for (let i = 1; i < np; i++) if (cost[i] < cost[b]) b = i;
      const f = 0.5 + 0.5 * ctx.prng.next();
      const trials = pop.map((_, i) => {
        let r1 = ctx.prng.int(np), r2 = ctx.prng.int(np);
        while (r1 === i) r1 = ctx.prng.int(np);
        while (r2 === i || r2 === r1) r2 = ctx.prng.int(np);
        const keep = ctx.prng.int(d);
        return pop[i].map((v, j) => {
          if (j !== keep && ctx.prng.next() >= cr) return v;
          const m = pop[b][j] + f * (pop[r1][j] - pop[r2][j]);
          return Math.min(1 - 1e-9, Math.max(0, m));
        });
      });
      const pts = trials.map((x) => pointOfUnit(space, x));
      stale = pts.some((p) => ctx.known(p) === undefined) ? 0 : stale + 1;
      const tc = yield pts;
      cost = cost.map((c, i) => {
        if (tc[i] > c) return c;
        pop[i] = trials[i];
        return tc[i];
      });
    }
  });
}
