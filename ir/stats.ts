/**
 * The one statistics module: mean, quantiles (linear interpolation between
 * order statistics, numpy's default and R's type 7), median and quartiles.
 * Every table and every plotted band of tunebook reads its figures from
 * here, so a tabled median and a plotted median of the same runs agree.
 *
 * Infinity is an ordinary value (a seed that never reached a target counts
 * as Infinity samples): a quantile that falls between two infinite order
 * statistics is Infinity, never NaN.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { median, quantile, spread, summary } from "./stats.ts";
 * assert.equal(median([4, 1, 3, 2]), 2.5);
 * assert.equal(quantile([1, 2, 3, 4, 5], 0.25), 2);
 * assert.deepEqual(summary([1, 2, 3, 4, 5]), { mean: 3, median: 3, p25: 2, p75: 4 });
 * assert.equal(quantile([1, Infinity, Infinity], 0.75), Infinity);
 * assert.equal(spread([1, 2, 3, 4, 5]), 2 / 3); // (p75 - p25) / median = (4 - 2) / 3
 * ```
 * @module
 */

/** Arithmetic mean; NaN for an empty list. */
export function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/**
 * The `p` quantile (0 <= p <= 1) of a list, linearly interpolated between
 * the order statistics around index `(n - 1) p`; NaN for an empty list.
 */
export function quantile(xs: readonly number[], p: number): number {
  return sortedQuantile([...xs].sort((a, b) => a - b), p);
}

/** {@link quantile} of a list already sorted in ascending order. */
export function sortedQuantile(sorted: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`quantile: p must be in [0, 1], got ${p}`);
  if (sorted.length === 0) return NaN;
  const i = (sorted.length - 1) * p, lo = Math.floor(i), hi = Math.ceil(i);
  const a = sorted[lo], b = sorted[hi];
  return lo === hi || a === b ? a : a + (b - a) * (i - lo);
}

/** Median of a non-empty list (mean of the middle two for even lengths); RangeError when empty. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new RangeError("median of an empty list");
  return quantile(xs, 0.5);
}

/** Mean, median and quartiles of a list. */
export interface Summary {
  /** Arithmetic mean. */
  mean: number;
  /** Median (linear interpolation, numpy's default). */
  median: number;
  /** 25th percentile. */
  p25: number;
  /** 75th percentile. */
  p75: number;
}

/** Mean, median and quartiles of a list (NaN each for an empty list). */
export function summary(xs: readonly number[]): Summary {
  const s = [...xs].sort((a, b) => a - b);
  return {
    mean: mean(s),
    median: sortedQuantile(s, 0.5),
    p25: sortedQuantile(s, 0.25),
    p75: sortedQuantile(s, 0.75),
  };
}

/**
 * The spread of repeated timings: the interquartile range relative to the
 * median, `(p75 - p25) / median` (quartiles as {@link quantile}); robust to
 * one outlier repeat, unlike (max - min) / median. 0.05 means the middle half
 * of the repeats lie within 5% of the median. NaN when there is nothing to
 * say: fewer than 2 values, a median that is not positive and finite, or a
 * non-finite value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { spread } from "./stats.ts";
 * assert.equal(spread([1, 2, 3, 4, 5]), 2 / 3); // quartiles 2 and 4, median 3
 * assert.equal(spread([2, 2, 2]), 0);
 * assert.ok(Number.isNaN(spread([1e-3]))); // one repeat: no spread to measure
 * ```
 */
export function spread(times: readonly number[]): number {
  if (times.length < 2 || times.some((t) => !Number.isFinite(t))) return NaN;
  const s = [...times].sort((a, b) => a - b);
  const m = sortedQuantile(s, 0.5);
  if (!(m > 0)) return NaN;
  return (sortedQuantile(s, 0.75) - sortedQuantile(s, 0.25)) / m;
}
