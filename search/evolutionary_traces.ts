/**
 * Evolutionary search over a trace space (Ansor / MetaSchedule): a
 * population seeded with the best measured schedules and fresh samples
 * evolves for a few generations under the mutators, parents drawn in
 * proportion to the cost model's score; the best-scored unmeasured schedules
 * are proposed, an epsilon share of them replaced by random samples
 * (epsilon-greedy). Measurements update the model.
 *
 * Defaults follow MetaSchedule (init_measured_ratio 0.2, 4 generations,
 * mutation probability 0.85, epsilon 0.05) except the population: 128
 * instead of 512, because one mutation here (replay, repair and lowering)
 * costs about 3 ms and a round of 4 x 512 would cost seconds per batch.
 *
 * @example
 * ```ts
 * import { evolutionaryTraceSearch } from "./evolutionary_traces.ts";
 * import { defaultSpace } from "./sketch.ts";
 * import { createWorkload } from "../ir/workloads.ts";
 * const s = evolutionaryTraceSearch(defaultSpace(createWorkload("matmul", [64, 64, 64])), {
 *   seed: 1,
 *   populationSize: 16,
 * });
 * if (s.propose(4).length !== 4) throw new Error();
 * ```
 * @module
 */
import type { CostModel } from "../costmodel/model.ts";
import { randomModel } from "../costmodel/random_model.ts";
import { createPrng } from "../ir/prng.ts";
import { canonicalJSON, type Trace } from "../ir/trace.ts";
import { mutate, verify } from "./mutators.ts";
import type { DesignSpace } from "./space.ts";
import type { Candidate, Observation, Strategy } from "./strategy.ts";

/** Options of {@link evolutionaryTraceSearch}. */
export interface EvolutionaryTraceOptions {
  /** Seed of the search's PRNG (required). */
  seed: number;
  /** Cost model scoring schedules. Default: a random model (seed `seed`). */
  model?: CostModel;
  /** Population size. Default 128. */
  populationSize?: number;
  /** Share of the initial population taken from the best measured. Default 0.2. */
  initMeasuredRatio?: number;
  /** Generations per proposal round. Default 4. */
  generations?: number;
  /** Probability that a child is a mutation of its parent (else a copy). Default 0.85. */
  mutationProb?: number;
  /** Share of each batch replaced by random samples. Default 0.05. */
  epsilon?: number;
}

/** Evolutionary search with a cost model over a trace space. */
export function evolutionaryTraceSearch(
  space: DesignSpace,
  o: EvolutionaryTraceOptions,
): Strategy {
  const prng = createPrng(o.seed);
  const model = o.model ?? randomModel(o.seed);
  const postprocess = space.postprocess?.bind(space) ?? verify;
  const popSize = o.populationSize ?? 128;
  const generations = o.generations ?? 4;
  const mutationProb = o.mutationProb ?? 0.85;
  const epsilon = o.epsilon ?? 0.05;
  const measured = new Map<string, { trace: Trace; seconds?: number }>();
  const proposed = new Set<string>();

  const sampleFresh = (): Trace | undefined => {
    for (let i = 0; i < 32; i++) {
      const t = space.sample(prng);
      if (!proposed.has(canonicalJSON(t))) return t;
    }
    return undefined;
  };

  const initial = (): Trace[] => {
    const best = [...measured.values()]
      .filter((m) => m.seconds !== undefined)
      .sort((a, b) => a.seconds! - b.seconds!)
      .slice(0, Math.floor(popSize * (o.initMeasuredRatio ?? 0.2)))
      .map((m) => m.trace);
    const pop = [...best];
    while (pop.length < popSize) pop.push(space.sample(prng));
    return pop;
  };

  const evolve = (pop: Trace[]): Trace[] => {
    for (let g = 0; g < generations; g++) {
      const scores = model.predict(pop.map((trace) => ({ trace })));
      const lo = Math.min(...scores);
      const weights = scores.map((s) => s - lo + 1e-6);
      const total = weights.reduce((a, b) => a + b, 0);
      const next: Trace[] = [];
      for (let attempt = 0; next.length < popSize && attempt < popSize * 4; attempt++) {
        let r = prng.next() * total, k = 0;
        while (k < pop.length - 1 && (r -= weights[k]) >= 0) k++;
        const child = prng.next() < mutationProb ? mutate(pop[k], prng, postprocess) : pop[k];
        if (child) next.push(child);
      }
      if (next.length > 0) pop = next;
    }
    return pop;
  };

  return {
    name: "ansor",
    propose(n: number): Candidate[] {
      const pop = evolve(initial());
      const unique = new Map<string, Trace>();
      for (const t of pop) {
        const k = canonicalJSON(t);
        if (!proposed.has(k) && !unique.has(k)) unique.set(k, t);
      }
      const pool = [...unique.values()];
      const scores = model.predict(pool.map((trace) => ({ trace })));
      const ranked = pool.map((t, i) => ({ t, s: scores[i] })).sort((a, b) => b.s - a.s);
      const out: Trace[] = [];
      const greedy = Math.max(0, n - Math.round(n * epsilon));
      for (const { t } of ranked) {
        if (out.length >= greedy) break;
        out.push(t);
      }
      while (out.length < n) {
        const t = sampleFresh();
        if (!t) break;
        if (!out.some((x) => canonicalJSON(x) === canonicalJSON(t))) out.push(t);
      }
      out.forEach((t) => proposed.add(canonicalJSON(t)));
      return out.map((trace) => ({ trace }));
    },
    observe(observations: Observation[]): void | Promise<void> {
      const samples = [];
      for (const ob of observations) {
        if (!ob.candidate.trace) continue;
        const k = canonicalJSON(ob.candidate.trace);
        proposed.add(k);
        if (!measured.has(k)) {
          measured.set(k, { trace: ob.candidate.trace, seconds: ob.seconds });
          samples.push({ candidate: ob.candidate, seconds: ob.seconds });
        }
      }
      if (samples.length > 0) return model.update(samples);
    },
  };
}
