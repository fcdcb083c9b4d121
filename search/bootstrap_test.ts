import assert from "node:assert/strict";
import { bootstrapMeanInterval } from "./bootstrap.ts";

Deno.test("bootstrapMeanInterval brackets the mean, narrows with more seeds, is seeded", () => {
  const few = [0.2, 0.9, 0.5, 0.7, 0.4];
  const many = [...few, ...few, ...few, ...few];
  const [lo, hi] = bootstrapMeanInterval(few);
  assert.ok(lo < 0.54 && 0.54 < hi && lo >= 0.2 && hi <= 0.9);
  const [lo2, hi2] = bootstrapMeanInterval(many);
  assert.ok(hi2 - lo2 < hi - lo);
  assert.deepEqual(bootstrapMeanInterval(few, 500, 7), bootstrapMeanInterval(few, 500, 7));
  assert.deepEqual(bootstrapMeanInterval([3, 3, 3]), [3, 3]);
});
