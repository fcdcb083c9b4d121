/**
 * A genetic algorithm over a knob space with the semantics of AutoTVM's
 * GATuner: a random first generation; once a generation is measured, fitness
 * is 1/seconds (0 for failures), the elites are kept, parents are drawn with
 * probability proportional to fitness, children come from a single-point
 * crossover of the knob vectors and per-knob mutation, and points visited
 * before are never proposed again.
 *
 * @example
 * ```ts
 * import { geneticAlgorithm } from "./genetic.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([
 *   { name: "x", kind: "other", options: [0, 1, 2, 3, 4, 5, 6, 7] },
 *   { name: "y", kind: "other", options: [0, 1, 2, 3, 4, 5, 6, 7] },
 * ]);
 * const s = geneticAlgorithm(space, { seed: 1, populationSize: 8 });
 * const gen = s.propose(8);
 * s.observe(gen.map((c) => ({ candidate: c, errorKind: "none", seconds: 1 + c.knobs![0] })));
 * if (s.propose(8).length !== 8) throw new Error();
 * ```
 * @module
 */
import { createPrng } from "../ir/prng.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import { freshPointSampler, knobIndex, observedCost } from "./random.ts";
import type { Candidate, CandidateOf, Observation, Strategy } from "./strategy.ts";

/** Options of {@link geneticAlgorithm}. */
export interface GeneticAlgorithmOptions {
  /** Seed of every random choice. */
  seed: number;
  /** Points per generation. Default 100 (AutoTVM's `pop_size`). */
  populationSize?: number;
  /** Best points carried to the parent pool of the next generation. Default 3 (AutoTVM's `elite_num`). */
  eliteNum?: number;
  /** Probability that each knob of a child is set to a random option. Default 0.1 (AutoTVM's `mutation_prob`). */
  mutationProb?: number;
  /** Maps a point to a candidate. Default: `(knobs) => ({ knobs })`. */
  candidateOf?: CandidateOf;
}

interface Gene {
  point: Point;
  fitness: number;
}

/** Redraws of a random knob tried to make a child new and valid before a random fresh point replaces it. */
const REPAIR_TRIES = 50;

/**
 * A genetic algorithm (AutoTVM GATuner semantics). The next generation is bred
 * when the current one has been proposed and measured; the parent pool is
 * every point measured since the last breeding plus the elites. While a
 * generation is proposed but not yet measured, further proposals are fresh
 * random points, which join the parent pool when measured (and a generation
 * whose points never come back is bred once as many other points were
 * measured). Children that are invalid or already visited get random knobs
 * redrawn, then are replaced by a random fresh point. Proposes fewer than
 * asked only once every valid point has been proposed.
 */
export function geneticAlgorithm(space: KnobSpace, options: GeneticAlgorithmOptions): Strategy {
  const candidateOf = options.candidateOf ?? ((knobs: number[]) => ({ knobs }));
  const populationSize = Math.max(1, Math.min(options.populationSize ?? 100, space.size));
  const eliteNum = Math.max(0, Math.min(options.eliteNum ?? 3, populationSize));
  const mutationProb = options.mutationProb ?? 0.1;
  const prng = createPrng(options.seed);
  const seen = new Set<number>();
  const sampler = freshPointSampler(space, prng, seen);
  const dims = space.knobs.map((k) => k.options.length);

  let generation: Point[] = [];
  let proposed = 0;
  let pending = new Set<number>();
  let pool: Gene[] = [];
  let elites: Gene[] = [];
  let started = false;

  const randomGeneration = (): Point[] => {
    const out: Point[] = [];
    while (out.length < populationSize) {
      const p = sampler.next();
      if (!p) break;
      out.push(p);
    }
    return out;
  };

  const drawParent = (genes: Gene[], weights: number[], total: number): number => {
    let r = prng.next() * total;
    for (let i = 0; i < genes.length; i++) {
      r -= weights[i];
      if (r < 0) return i;
    }
    return genes.length - 1;
  };

  const breed = (): Point[] => {
    const genes = [...pool, ...elites];
    if (genes.length === 0) return randomGeneration();
    const ranked = genes.map((g, i) => ({ g, i })).sort((a, b) =>
      b.g.fitness - a.g.fitness || a.i - b.i
    );
    elites = ranked.slice(0, eliteNum).map((r) => r.g);
    const max = Math.max(...genes.map((g) => g.fitness));
    const weights = genes.map((g) => (max > 0 ? g.fitness / max : 0) + 1e-8);
    const total = weights.reduce((a, b) => a + b, 0);
    const next: Point[] = [];
    const inNext = new Set<number>();
    while (next.length < populationSize) {
      const a = drawParent(genes, weights, total);
      let b = a;
      if (genes.length > 1) {
        // Second parent drawn without replacement.
        const wb = weights.map((w, i) => (i === a ? 0 : w));
        b = drawParent(genes, wb, total - weights[a]);
      }
      const cut = dims.length > 0 ? prng.int(dims.length) : 0;
      const child = [...genes[a].point.slice(0, cut), ...genes[b].point.slice(cut)];
      for (let j = 0; j < dims.length; j++) {
        if (prng.next() < mutationProb) child[j] = prng.int(dims[j]);
      }
      let ok = false;
      for (let t = 0; t <= REPAIR_TRIES; t++) {
        const i = space.index(child);
        if (!seen.has(i) && !inNext.has(i) && space.isValid(child)) {
          ok = true;
          break;
        }
        if (dims.length === 0) break;
        const j = prng.int(dims.length);
        child[j] = prng.int(dims[j]);
      }
      const p = ok ? child : sampler.next();
      if (!p) break;
      const i = space.index(p);
      seen.add(i);
      inNext.add(i);
      next.push(p);
    }
    pool = [];
    return next;
  };

  const startGeneration = (points: Point[]) => {
    generation = points;
    proposed = 0;
    pending = new Set(points.map((p) => space.index(p)));
  };

  return {
    name: "ga",
    propose(n: number): Candidate[] {
      if (!started) {
        started = true;
        startGeneration(randomGeneration());
      }
      const out: Candidate[] = [];
      while (out.length < n) {
        if (proposed < generation.length) {
          out.push(candidateOf(generation[proposed++]));
          continue;
        }
        if (pending.size === 0) {
          // Generation measured but not yet bred (or empty): breed now.
          startGeneration(breed());
          if (generation.length > 0) continue;
        }
        const p = sampler.next();
        if (!p) break;
        out.push(candidateOf(p));
      }
      return out;
    },
    observe(observations: Observation[]): void {
      for (const o of observations) {
        const i = knobIndex(space, o.candidate.knobs);
        if (i === undefined) continue;
        seen.add(i);
        pending.delete(i);
        const cost = observedCost(o);
        const fitness = !Number.isFinite(cost) ? 0 : cost > 0 ? 1 / cost : Number.MAX_VALUE;
        pool.push({ point: space.point(i), fitness });
      }
      const proposedAll = started && proposed >= generation.length;
      if (proposedAll && (pending.size === 0 || pool.length >= generation.length)) {
        startGeneration(breed());
      }
    },
  };
}
