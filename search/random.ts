/**
 * Random search: every proposal is an independent sample of the design
 * space. The baseline every other strategy is compared with.
 *
 * @example
 * ```ts
 * import { randomSearch } from "./random.ts";
 * import { defaultSpace } from "./sketch.ts";
 * import { matmul } from "../ir/workloads.ts";
 * const s = randomSearch(defaultSpace(matmul(32, 32, 32)), { seed: 1 });
 * if (s.propose(4).length !== 4) throw new Error();
 * ```
 * @module
 */
import { createPrng } from "../ir/prng.ts";
import type { DesignSpace } from "./space.ts";
import type { Candidate, Observation, Strategy } from "./strategy.ts";

/** Options of {@link randomSearch}. */
export interface RandomSearchOptions {
  /** Seed of the sampler. */
  seed: number;
}

/** Random search over a design space. */
export function randomSearch(space: DesignSpace, options: RandomSearchOptions): Strategy {
  const prng = createPrng(options.seed);
  return {
    name: "random",
    propose(n: number): Candidate[] {
      return Array.from({ length: n }, () => ({ trace: space.sample(prng) }));
    },
    observe(_observations: Observation[]): void {},
  };
}
