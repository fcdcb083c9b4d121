import assert from "node:assert/strict";
import { trialsToReach, trialsUsed } from "./trials_used.ts";

Deno.test("trialsToReach is the first trial at or below the target, undefined when never", () => {
  assert.equal(trialsToReach([NaN, NaN, 9, 7, 7, 5], 7), 4);
  assert.equal(trialsToReach([3], 3), 1);
  assert.equal(trialsToReach([NaN, 9, 8], 7), undefined);
  assert.equal(trialsToReach([], 7), undefined);
});

Deno.test("trialsUsed sets the target within a fraction of the best final estimate of any curve", () => {
  const u = trialsUsed({
    fast: [NaN, 20, 10, 10, 10],
    slow: [NaN, 30, 25, 12, 10.4],
    never: [NaN, 30, 30, 30, 30],
    none: [NaN, NaN, NaN, NaN, NaN],
  }, 0.05);
  assert.equal(u.target, 10.5);
  assert.deepEqual(u.used, { fast: 3, slow: 5, never: undefined, none: undefined });
  // Within 0: only the best curve reaches it, at the trial it gets there.
  assert.deepEqual(trialsUsed({ a: [4, 2], b: [3, 3] }, 0).used, { a: 2, b: undefined });
});
