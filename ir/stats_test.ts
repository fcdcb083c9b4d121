import assert from "node:assert/strict";
import { mean, median, quantile, sortedQuantile, spread, summary } from "./stats.ts";

Deno.test("quantile interpolates linearly between order statistics (numpy's default)", () => {
  const xs = [7, 1, 3, 5]; // sorted 1 3 5 7
  assert.equal(quantile(xs, 0), 1);
  assert.equal(quantile(xs, 1), 7);
  assert.equal(quantile(xs, 0.5), 4);
  assert.equal(quantile(xs, 0.25), 2.5);
  assert.equal(quantile(xs, 0.75), 5.5);
  assert.ok(Number.isNaN(quantile([], 0.5)));
  assert.throws(() => quantile(xs, 1.5), RangeError);
  assert.equal(sortedQuantile([1, 3, 5, 7], 0.25), 2.5);
});

Deno.test("median of an odd or even list, and of none a RangeError", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.throws(() => median([]), RangeError);
});

Deno.test("Infinity is a value: quantiles between infinite order statistics are Infinity, not NaN", () => {
  assert.equal(median([5, Infinity, Infinity, Infinity]), Infinity);
  assert.equal(quantile([1, 2, Infinity], 0.75), Infinity);
  assert.equal(quantile([1, 2, Infinity], 0.5), 2);
});

Deno.test("summary gives mean, median and quartiles", () => {
  assert.deepEqual(summary([5, 4, 3, 2, 1]), { mean: 3, median: 3, p25: 2, p75: 4 });
  assert.equal(mean([1, 2]), 1.5);
  assert.ok(Object.values(summary([])).every(Number.isNaN));
});

Deno.test("spread is the interquartile range over the median, robust to one outlier repeat", () => {
  assert.equal(spread([1, 2, 3, 4, 5]), 2 / 3);
  assert.equal(spread([3, 3, 3, 3]), 0);
  // One wild repeat out of nine moves (max - min) / median a lot, the spread little.
  const steady = [1, 1.01, 0.99, 1, 1.02, 0.98, 1, 1.01, 0.99];
  assert.ok(spread([...steady.slice(1), 9]) < 0.05);
  assert.ok(Number.isNaN(spread([])));
  assert.ok(Number.isNaN(spread([1])));
  assert.ok(Number.isNaN(spread([0, 0])));
  assert.ok(Number.isNaN(spread([1, Infinity])));
});
