import assert from "node:assert/strict";
import { roundRatios } from "./peers.ts";

Deno.test("roundRatios pairs the rounds where both figures exist", () => {
  const r = roundRatios([1, 2, undefined, 4], [1, 1, 1, 2]);
  assert.deepEqual(r, { median: 2, min: 1, max: 2, rounds: 3 });
  assert.equal(roundRatios([undefined], [1]), undefined);
  assert.deepEqual(roundRatios([3, 1], [1, 1]), { median: 2, min: 1, max: 3, rounds: 2 });
});
