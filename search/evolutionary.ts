/**
 * Evolutionary search guided by a cost model, in the style of MetaSchedule's
 * EvolutionarySearch (and Ansor's): an initial population of the best
 * measured points plus random points evolves for a few generations, parents
 * drawn in proportion to the model's score and mutated; the top unmeasured
 * points by score are proposed, a fraction epsilon replaced by random ones.
 *
 * @example
 * ```ts
 * import { evolutionarySearch } from "./evolutionary.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([
 *   { name: "x", kind: "other", options: [0, 1, 2, 3, 4, 5, 6, 7] },
 *   { name: "y", kind: "other", options: [0, 1, 2, 3, 4, 5, 6, 7] },
 * ]);
 * const s = evolutionarySearch(space, { seed: 1, populationSize: 32 });
 * const batch = s.propose(8);
 * s.observe(batch.map((c) => ({ candidate: c, errorKind: "none", seconds: 1 + c.knobs![0] })));
 * if (s.propose(8).length !== 8) throw new Error();
 * ```
 * @module
 */
import type { CostModel, Sample } from "../costmodel/model.ts";
import { randomModel } from "../costmodel/random_model.ts";
import { createPrng } from "../ir/prng.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import { freshPointSampler, knobIndex, observedCost } from "./random.ts";
import type { Candidate, CandidateOf, Observation, Strategy } from "./strategy.ts";
import type { ValidityModel } from "./validity.ts";

/** Options of {@link evolutionarySearch}. */
export interface EvolutionarySearchOptions {
  /** Seed of every random choice. */
  seed: number;
  /** Cost model scoring points (higher is better). Default: `randomModel` seeded from `seed`. */
  model?: CostModel;
  /** Points per generation. Default 512 (MetaSchedule's `population_size`). */
  populationSize?: number;
  /** Largest fraction of the initial population taken from the best measured points. Default 0.2. */
  initMeasuredRatio?: number;
  /** Rounds of evolution per proposal. Default 4 (MetaSchedule's `genetic_num_iters`). */
  generations?: number;
  /** Probability that a child is a mutated parent rather than a copy. Default 0.85. */
  mutationProb?: number;
  /** Fraction of each batch replaced by random unmeasured points (epsilon-greedy). Default 0.05. */
  epsilon?: number;
  /** Maps a point to a candidate. Default: `(knobs) => ({ knobs })`. */
  candidateOf?: CandidateOf;
  /**
   * A classifier of invalid points trained on the failures seen
   * (search/validity.ts): among the best-scored points, those it deems likely
   * invalid (probability below 0.5) go after the others. Default none.
   */
  validity?: ValidityModel;
}

/** Mutation attempts per child before the parent is copied (MetaSchedule's `genetic_max_fail_count`). */
const MAX_FAIL = 10;
/** Draws per random valid point of the initial population. */
const INIT_TRIES = 16;

/**
 * Evolutionary search (MetaSchedule semantics) over a knob space. Each
 * `propose(n)`: the initial population is the best measured valid points (up
 * to `initMeasuredRatio` of the population) and random valid points; each of
 * `generations` rounds scores the population with the model, remembers the
 * unproposed points with their scores, and breeds a new population: a parent
 * drawn with probability proportional to its score (shifted to be
 * non-negative) is, with probability `mutationProb`, mutated (one knob set to
 * another random option or moved ±1, equally likely), else copied. The scores
 * of the last population are remembered too. The batch is the best-scored
 * remembered points, with a fraction `epsilon` (rounded stochastically) of
 * random unproposed points instead; it is topped up with random points when
 * evolution found too few. `observe` passes the new measurements to
 * `model.update` (seconds undefined for failures; observations whose knobs
 * are not a point of the space are ignored). No point is proposed
 * twice; fewer than `n` only once every valid point has been proposed.
 */
export function evolutionarySearch(space: KnobSpace, options: EvolutionarySearchOptions): Strategy {
  const candidateOf = options.candidateOf ?? ((knobs: number[]) => ({ knobs }));
  const model = options.model ?? randomModel((options.seed ^ 0x5bd1e995) >>> 0);
  const populationSize = Math.max(1, options.populationSize ?? 512);
  const initMeasuredRatio = options.initMeasuredRatio ?? 0.2;
  const generations = Math.max(0, options.generations ?? 4);
  const mutationProb = options.mutationProb ?? 0.85;
  const epsilon = options.epsilon ?? 0.05;
  const prng = createPrng(options.seed);
  const seen = new Set<number>();
  const sampler = freshPointSampler(space, prng, seen);
  const measured = new Map<number, number>();
  const dims = space.knobs.map((k) => k.options.length);
  const mutable = dims.flatMap((d, j) => (d > 1 ? [j] : []));

  const randomValid = (): Point | undefined => {
    for (let t = 0; t < INIT_TRIES; t++) {
      const p = space.random(prng);
      if (space.isValid(p)) return p;
    }
    return undefined;
  };

  const mutate = (parent: Point): Point | undefined => {
    if (mutable.length === 0) return undefined;
    const j = prng.pick(mutable);
    const child = [...parent];
    if (prng.next() < 0.5) {
      const o = prng.int(dims[j] - 1);
      child[j] = o >= parent[j] ? o + 1 : o;
    } else {
      const d = prng.next() < 0.5 ? -1 : 1;
      child[j] = parent[j] + d >= 0 && parent[j] + d < dims[j] ? parent[j] + d : parent[j] - d;
    }
    return space.isValid(child) ? child : undefined;
  };

  const weightsOf = (scores: number[]): number[] => {
    const finite = scores.filter(Number.isFinite);
    const min = finite.length > 0 ? Math.min(...finite) : 0;
    const w = scores.map((s) => (Number.isFinite(s) ? (min < 0 ? s - min : s) : 0));
    return w.some((x) => x > 0) ? w : scores.map(() => 1);
  };

  return {
    name: "evolutionary",
    propose(n: number): Candidate[] {
      if (n <= 0) return [];
      const cache = new Map<number, number>();
      const score = (points: Point[]): number[] => {
        const idx = points.map((p) => space.index(p));
        const todo = [...new Set(idx.filter((i) => !cache.has(i)))];
        if (todo.length > 0) {
          const s = model.predict(todo.map((i) => candidateOf(space.point(i))));
          todo.forEach((i, k) => cache.set(i, Number.isFinite(s[k]) ? s[k] : -Infinity));
        }
        return idx.map((i) => cache.get(i)!);
      };

      // Initial population: best measured, then random valid points.
      const best = [...measured].filter(([, c]) => Number.isFinite(c))
        .sort((a, b) => a[1] - b[1] || a[0] - b[0])
        .slice(0, Math.floor(populationSize * initMeasuredRatio));
      let population: Point[] = best.map(([i]) => space.point(i));
      while (population.length < populationSize) {
        const p = randomValid();
        if (!p) break;
        population.push(p);
      }

      const remembered = new Map<number, number>();
      for (let g = 0; population.length > 0; g++) {
        const scores = score(population);
        population.forEach((p, k) => {
          const i = space.index(p);
          if (!seen.has(i)) remembered.set(i, scores[k]);
        });
        if (g >= generations) break;
        const w = weightsOf(scores);
        const total = w.reduce((a, b) => a + b, 0);
        const draw = (): Point => {
          let r = prng.next() * total;
          for (let k = 0; k < population.length; k++) {
            r -= w[k];
            if (r < 0) return population[k];
          }
          return population[population.length - 1];
        };
        const next: Point[] = [];
        const inNext = new Set<number>();
        while (next.length < populationSize) {
          let child: Point | undefined;
          let parent = draw();
          for (let fail = 0; fail <= MAX_FAIL && !child; fail++) {
            if (fail > 0) parent = draw();
            if (prng.next() >= mutationProb) {
              child = parent;
              break;
            }
            const m = mutate(parent);
            if (m && !inNext.has(space.index(m))) child = m;
          }
          child ??= parent;
          inNext.add(space.index(child));
          next.push(child);
        }
        population = next;
      }

      let ranked = [...remembered].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([i]) => i);
      const v = options.validity;
      if (v) {
        const head = ranked.slice(0, 4 * n);
        const ok = head.map((i) => v.pValid(space.point(i)) >= 0.5);
        ranked = [
          ...head.filter((_, k) => ok[k]),
          ...head.filter((_, k) => !ok[k]),
          ...ranked.slice(4 * n),
        ];
      }
      const x = n * epsilon;
      const nRandom = Math.min(n, Math.floor(x) + (prng.next() < x - Math.floor(x) ? 1 : 0));
      const out: Candidate[] = [];
      const push = (i: number) => {
        seen.add(i);
        out.push(candidateOf(space.point(i)));
      };
      let r = 0;
      while (out.length < n - nRandom && r < ranked.length) push(ranked[r++]);
      while (out.length < n) {
        const p = sampler.next();
        if (!p) break;
        out.push(candidateOf(p));
      }
      while (out.length < n && r < ranked.length) {
        const i = ranked[r++];
        if (!seen.has(i)) push(i);
      }
      return out;
    },
    observe(observations: Observation[]): void | Promise<void> {
      const samples: Sample[] = [];
      for (const o of observations) {
        const i = knobIndex(space, o.candidate.knobs);
        const cost = observedCost(o);
        if (i === undefined) continue;
        seen.add(i);
        if (options.validity && !measured.has(i)) {
          options.validity.add(space.point(i), cost < Infinity);
        }
        measured.set(i, cost);
        samples.push({ candidate: o.candidate, seconds: Number.isFinite(cost) ? cost : undefined });
      }
      if (samples.length > 0) return model.update(samples);
    },
  };
}
