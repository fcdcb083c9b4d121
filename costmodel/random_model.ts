/**
 * A cost model that knows nothing: uniform random scores from a seeded PRNG.
 * It stands in until a learned model is plugged in, and is the control of
 * every cost-model comparison.
 * @module
 */
import { createPrng } from "../ir/prng.ts";
import type { Candidate } from "../ir/candidate.ts";
import type { CostModel, Sample } from "./model.ts";

/** A random cost model seeded with `seed`. */
export function randomModel(seed: number): CostModel {
  const prng = createPrng(seed);
  return {
    name: "random",
    update(_samples: Sample[]): void {},
    predict(candidates: Candidate[]): number[] {
      return candidates.map(() => prng.next());
    },
  };
}
