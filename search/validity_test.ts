import assert from "node:assert/strict";
import { createPrng } from "../ir/prng.ts";
import { KnobSpace } from "../ir/knobs.ts";
import { validityClassifier, validityFeatures } from "./validity.ts";

// Threads per block: x * y must not exceed 256 (a product limit, as GPU spaces have).
const threads = new KnobSpace([
  { name: "block_x", kind: "other", options: [1, 2, 4, 8, 16, 32, 64, 128] },
  { name: "block_y", kind: "other", options: [1, 2, 4, 8, 16, 32] },
  { name: "unroll", kind: "annotate", options: [false, true] },
]);
const ok = (p: number[]) => {
  const v = threads.values(p);
  return (v.block_x as number) * (v.block_y as number) <= 256;
};

Deno.test("validityClassifier learns a product limit from 40 random points", () => {
  const prng = createPrng(1);
  const v = validityClassifier(threads);
  for (let i = 0; i < 40; i++) {
    const p = threads.random(prng);
    v.add(p, ok(p));
  }
  let right = 0;
  for (const p of threads.enumerate()) if ((v.pValid(p) >= 0.5) === ok(p)) right++;
  assert.ok(right / threads.size > 0.85, `accuracy ${right / threads.size}`);
  assert.equal(v.size, 40);
});

Deno.test("validityClassifier answers the observed share until it has seen both kinds", () => {
  const v = validityClassifier(threads);
  assert.equal(v.pValid([0, 0, 0]), 1);
  v.add([0, 0, 0], true);
  v.add([1, 0, 0], true);
  assert.equal(v.pValid([7, 5, 1]), 3 / 4);
  v.add([7, 5, 1], false);
  assert.ok(v.pValid([7, 5, 1]) < v.pValid([0, 0, 0]));
});

Deno.test("validityFeatures one-hot encode options and add a scaled log of numeric values", () => {
  const f = validityFeatures(threads)([7, 0, 1]);
  // 8 + 6 + 2 indicators, 2 log columns (block_x, block_y), 1 bias.
  assert.equal(f.length, 8 + 6 + 2 + 2 + 1);
  assert.equal(f[7], 1);
  assert.equal(f[8], 1);
  assert.equal(f[15], 1);
  assert.equal(f[16], 1); // log of the largest block_x, scaled to 1
  assert.equal(f[17], 0); // log of the smallest block_y, scaled to 0
});
