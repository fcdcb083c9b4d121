/**
 * Seeded strategies: a strategy that first proposes given candidates (seeds),
 * then the proposals of the strategy it wraps. A network's tasks are seeded
 * with their default schedule (the untuned lowering the executor runs), so a
 * task's best is never worse than untuned.
 *
 * The wrapped strategy never sees a seed: seeds are not points of its space
 * (the default schedule has no knobs, and an empty trace that is no sketch),
 * so their observations are held back from it, and a model-based strategy's
 * features see only its own candidates. Proposals and observations of the
 * wrapped strategy are otherwise passed through unchanged, so its determinism
 * promise holds. Seeds that are points of the wrapped strategy's space (a
 * GPU run's GEMM configurations, traces of its sketches) may be shared with
 * it instead (`share`): their observations are passed on like its own, so
 * its cost model learns from them and its search can start from them.
 *
 * @example
 * ```ts
 * import { seededStrategy } from "./seeded.ts";
 * import { randomKnobSearch } from "./random.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [1, 2, 3, 4] }]);
 * const s = seededStrategy(randomKnobSearch(space, { seed: 1 }), [{}]);
 * const [first, second] = s.propose(2);
 * if (first.knobs !== undefined || second.knobs === undefined) throw new Error();
 * ```
 * @module
 */
import type { Candidate, Observation, Strategy } from "./strategy.ts";

/** Options of {@link seededStrategy}. */
export interface SeededOptions {
  /** Pass the seeds' observations on to the wrapped strategy. Default false. */
  share?: boolean;
}

/**
 * `inner` preceded by `seeds`: the first proposals are the seeds, in order
 * (as many as asked), then `inner`'s; observations of seeds are not passed
 * on unless `share`.
 */
export function seededStrategy(
  inner: Strategy,
  seeds: Candidate[],
  options: SeededOptions = {},
): Strategy {
  const waiting = [...seeds];
  const held = new Set<Candidate>(options.share ? [] : seeds);
  return {
    name: inner.name,
    propose(n: number): Candidate[] {
      const first = waiting.splice(0, Math.max(0, n));
      return first.length < n ? [...first, ...inner.propose(n - first.length)] : first;
    },
    observe(observations: Observation[]) {
      const own = observations.filter((o) => !held.has(o.candidate));
      // Unshared, a round of seeds alone says nothing to `inner` (which proposed nothing in it).
      if (own.length > 0 || observations.length === 0) return inner.observe(own);
    },
  };
}
