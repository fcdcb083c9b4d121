import assert from "node:assert/strict";
import { checkCost } from "../bench/cuda_check_cost.ts";

Deno.test("bench/cuda_check_cost.ts checks a stand-in candidate against the stored reference", async () => {
  const seconds = await checkCost([16, 8, 4], 1);
  assert.equal(seconds.length, 1);
  assert.ok(seconds[0] > 0);
});
