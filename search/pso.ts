/**
 * Particle swarm optimization (Kernel Tuner's `pso`), on a knob space.
 * Knobs are coordinates in [0, 1) read as option floor(x·options). Each
 * particle keeps its best position; velocities follow
 * v = w·v + c1·r1·(personal best − x) + c2·r2·(swarm best − x), positions
 * are clipped to the range. The swarm starts on a Latin hypercube; one
 * iteration of the swarm is one batch.
 *
 * @example
 * ```ts
 * import { particleSwarm } from "./pso.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [0, 1, 2, 3] }]);
 * if (particleSwarm(space, { seed: 1 }).propose(4).length === 0) throw new Error();
 * ```
 * @module
 */
import type { KnobSpace } from "../ir/knobs.ts";
import { latinHypercube, pointOfUnit } from "./diff_evo.ts";
import { type StepwiseOptions, stepwiseStrategy } from "./stepwise.ts";
import type { Strategy } from "./strategy.ts";

/** Options of {@link particleSwarm}. */
export interface PsoOptions extends StepwiseOptions {
  /** Particles. Default 10 (small, for budgets of 25-400). */
  swarmSize?: number;
  /**
   * Inertia w. Default 0.9 (Kernel Tuner uses 0.5): on knob indices a swarm with w = 0.5
   * collapses onto its first good region within a few iterations (below random search on
   * convolution_MI250X up to 200 evaluations); 0.9 keeps it exploring.
   */
  w?: number;
  /** Pull towards the particle's best, c1. Default 2 (Kernel Tuner). */
  c1?: number;
  /** Pull towards the swarm's best, c2. Default 1 (Kernel Tuner). */
  c2?: number;
}

/** Particle swarm optimization over a knob space. */
export function particleSwarm(space: KnobSpace, o: PsoOptions): Strategy {
  const n = Math.max(2, o.swarmSize ?? 10);
  const w = o.w ?? 0.9, c1 = o.c1 ?? 2, c2 = o.c2 ?? 1;
  const d = space.knobs.length;
  return stepwiseStrategy("pso", space, o, function* (ctx) {
    const x = latinHypercube(n, d, ctx.prng);
    const v = x.map(() => Array.from({ length: d }, () => 0.2 * (ctx.prng.next() - 0.5)));
    const pbest = x.map((p) => [...p]);
    const pcost = yield x.map((p) => pointOfUnit(space, p));
    // A swarm that only revisits known points has converged: the body then restarts.
    for (let stale = 0; stale < 3;) {
      let g = 0;
      for (let i = 1; i < n; i++) if (pcost[i] < pcost[g]) g = i;
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < d; j++) {
          v[i][j] = w * v[i][j] + c1 * ctx.prng.next() * (pbest[i][j] - x[i][j]) +
            c2 * ctx.prng.next() * (pbest[g][j] - x[i][j]);
          x[i][j] = Math.min(1 - 1e-9, Math.max(0, x[i][j] + v[i][j]));
        }
      }
      const pts = x.map((p) => pointOfUnit(space, p));
      stale = pts.some((p) => ctx.known(p) === undefined) ? 0 : stale + 1;
      const c = yield pts;
      for (let i = 0; i < n; i++) {
        if (c[i] <= pcost[i]) {
          pcost[i] = c[i];
          pbest[i] = [...x[i]];
        }
      }
    }
  });
}
