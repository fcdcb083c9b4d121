import assert from "node:assert/strict";
import { createPrng } from "./prng.ts";
import {
  checkPerfectTile,
  divisors,
  primeFactors,
  sampleCategorical,
  samplePerfectTile,
} from "./sampling.ts";

Deno.test("primeFactors and divisors", () => {
  assert.deepEqual(primeFactors(1), []);
  assert.deepEqual(primeFactors(360), [2, 2, 2, 3, 3, 5]);
  assert.deepEqual(primeFactors(37), [37]);
  assert.deepEqual(divisors(12), [1, 2, 3, 4, 6, 12]);
  assert.deepEqual(divisors(1), [1]);
});

Deno.test("perfect tiles multiply to the extent and respect the innermost bound", () => {
  for (const extent of [1, 2, 12, 37, 64, 360, 512, 1000, 1024]) {
    for (let n = 1; n <= 5; n++) {
      for (const maxInner of [1, 3, 16, 64]) {
        const seen = new Set<string>();
        for (let seed = 0; seed < 40; seed++) {
          const f = samplePerfectTile(extent, n, maxInner, createPrng(seed * 7919 + n));
          const what = `extent ${extent} n ${n} max ${maxInner}: ${JSON.stringify(f)}`;
          assert.equal(f.length, n, what);
          assert.ok(f.every((x) => Number.isInteger(x) && x >= 1), what);
          assert.equal(f.reduce((a, b) => a * b, 1), extent, what);
          if (n > 1) assert.ok(f[n - 1] <= maxInner, what);
          assert.equal(checkPerfectTile(f, extent, n, maxInner), undefined, what);
          seen.add(JSON.stringify(f));
        }
        // Not stuck on one answer when there is a choice.
        if (extent === 512 && n >= 2 && maxInner >= 16) assert.ok(seen.size > 3, `${seen.size}`);
      }
    }
  }
});

Deno.test("perfect tiles are reproducible from the seed", () => {
  const a = samplePerfectTile(1000, 4, 16, createPrng(3));
  const b = samplePerfectTile(1000, 4, 16, createPrng(3));
  assert.deepEqual(a, b);
  assert.throws(() => samplePerfectTile(8, 0, 4, createPrng(1)), RangeError);
});

Deno.test("checkPerfectTile names what is wrong", () => {
  assert.match(checkPerfectTile([4, 4], 16, 3, 16)!, /expected 3 factors/);
  assert.match(checkPerfectTile("x", 16, 2, 16)!, /expected 2 factors/);
  assert.match(checkPerfectTile([0, 16], 16, 2, 16)!, /positive/);
  assert.match(checkPerfectTile([2.5, 6.4], 16, 2, 16)!, /positive/);
  assert.match(checkPerfectTile([3, 5], 16, 2, 16)!, /product 15 is not the extent 16/);
  assert.match(checkPerfectTile([1, 16], 16, 2, 8)!, /innermost 16 exceeds 8/);
  assert.equal(checkPerfectTile([2, 8], 16, 2, 8), undefined);
});

Deno.test("categorical frequencies follow the probabilities", () => {
  const prng = createPrng(2024);
  const probs = [0.1, 0.2, 0, 0.7];
  const counts = [0, 0, 0, 0];
  const n = 20000;
  for (let i = 0; i < n; i++) counts[sampleCategorical(probs, prng)]++;
  probs.forEach((p, i) => {
    assert.ok(Math.abs(counts[i] / n - p) < 0.015, `index ${i}: ${counts[i] / n} vs ${p}`);
  });
  assert.equal(counts[2], 0, "a zero probability is never drawn");
  // Unnormalised weights work the same.
  const w = [0, 0, 0];
  for (let i = 0; i < 9000; i++) w[sampleCategorical([1, 1, 4], prng)]++;
  assert.ok(Math.abs(w[2] / 9000 - 4 / 6) < 0.02, `${w}`);
  assert.throws(() => sampleCategorical([0, 0], prng), RangeError);
  assert.throws(() => sampleCategorical([], prng), RangeError);
});
