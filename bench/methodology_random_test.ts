import assert from "node:assert/strict";
import { REFERENCE_RANDOM, setSpread } from "./methodology_random.ts";

Deno.test("setSpread gives the sample deviation and each reference's distance in it", () => {
  const s = setSpread([-0.1, 0, 0.1], [0.2, -0.05]);
  assert.ok(Math.abs(s.mean) < 1e-12);
  assert.ok(Math.abs(s.sd - 0.1) < 1e-12);
  assert.deepEqual(s.z.map((z) => Math.round(z * 10) / 10), [2, -0.5]);
  assert.throws(() => setSpread([0.1], [0]), RangeError);
});

Deno.test("the reference table holds two sets per hub space and the aggregate", () => {
  assert.deepEqual(Object.keys(REFERENCE_RANDOM).sort(), [
    "aggregate",
    "convolution_A100",
    "convolution_A4000",
    "convolution_MI250X",
    "dedispersion_A100",
  ]);
  for (const v of Object.values(REFERENCE_RANDOM)) assert.equal(v.length, 2);
});
