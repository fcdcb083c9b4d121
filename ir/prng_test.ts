import assert from "node:assert/strict";
import { createPrng } from "./prng.ts";

const draw = (seed: number, n: number) => {
  const p = createPrng(seed);
  return Array.from({ length: n }, () => p.next());
};

Deno.test("the same seed gives the same sequence, other seeds another", () => {
  assert.deepEqual(draw(42, 100), draw(42, 100));
  assert.notDeepEqual(draw(42, 100), draw(43, 100));
  assert.notDeepEqual(draw(0, 100), draw(2 ** 32, 100).map((x) => x + 1));
  // Seeds are 32-bit: fractional parts are dropped.
  assert.deepEqual(draw(7.9, 10), draw(7, 10));
});

Deno.test("next() is in [0, 1) and roughly uniform", () => {
  const xs = draw(1, 20000);
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  assert.ok(Math.abs(mean - 0.5) < 0.01, `mean ${mean}`);
});

Deno.test("int(n) stays in [0, n) and reaches every value", () => {
  const p = createPrng(9);
  for (const n of [1, 2, 3, 7, 10, 1000]) {
    const seen = new Set<number>();
    for (let i = 0; i < 20 * n + 100; i++) {
      const v = p.int(n);
      assert.ok(Number.isInteger(v) && v >= 0 && v < n, `int(${n}) gave ${v}`);
      seen.add(v);
    }
    if (n <= 10) assert.equal(seen.size, n);
  }
  assert.throws(() => p.int(0), RangeError);
  assert.throws(() => p.int(-3), RangeError);
  assert.throws(() => p.int(NaN), RangeError);
});

Deno.test("pick, fork and bad seeds", () => {
  const p = createPrng(5);
  const items = ["a", "b", "c"];
  for (let i = 0; i < 50; i++) assert.ok(items.includes(p.pick(items)));
  assert.throws(() => p.pick([]), RangeError);
  const f1 = createPrng(5).fork(), f2 = createPrng(5).fork();
  assert.deepEqual([f1.next(), f1.next()], [f2.next(), f2.next()]);
  const parent = createPrng(5);
  const child = parent.fork();
  assert.notDeepEqual([parent.next(), parent.next()], [child.next(), child.next()]);
  assert.throws(() => createPrng(NaN), RangeError);
  assert.throws(() => createPrng(Infinity), RangeError);
});
