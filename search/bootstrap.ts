/**
 * Seed noise of a strategy study: a bootstrap over seeds of a mean (e.g. the
 * fraction of optimum at one budget), so a mean below a reference (random
 * search's exact expectation) can be told apart from the spread of a few
 * seeds. A cell is below the reference beyond noise when the reference lies
 * above the interval's upper end.
 * @module
 */
import { createPrng } from "../ir/prng.ts";

/**
 * The 2.5% and 97.5% quantiles of the mean of `xs` over `draws` resamples with replacement.
 *
 * @example
 * ```ts
 * import { bootstrapMeanInterval } from "./bootstrap.ts";
 * const [lo, hi] = bootstrapMeanInterval([1, 2, 3, 4], 200, 1);
 * if (!(lo >= 1 && hi <= 4 && lo <= hi)) throw new Error();
 * ```
 */
export function bootstrapMeanInterval(
  xs: readonly number[],
  draws = 2000,
  seed = 1,
): [number, number] {
  const prng = createPrng(seed);
  const n = xs.length;
  const means = new Float64Array(draws);
  for (let d = 0; d < draws; d++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += xs[Math.floor(prng.next() * n)];
    means[d] = s / n;
  }
  means.sort();
  return [means[Math.floor(0.025 * (draws - 1))], means[Math.ceil(0.975 * (draws - 1))]];
}
