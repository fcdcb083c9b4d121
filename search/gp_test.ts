import assert from "node:assert/strict";
import { createPrng } from "../ir/prng.ts";
import { normalCdf, normalQuantile, normalScores, PoolGP } from "./gp.ts";

const rand = (prng: ReturnType<typeof createPrng>, d: number) =>
  Float64Array.from({ length: d }, () => prng.next());

Deno.test("PoolGP updated one observation at a time equals a process rebuilt from scratch", () => {
  const prng = createPrng(1);
  const pool = Array.from({ length: 30 }, () => rand(prng, 3));
  const xs = Array.from({ length: 12 }, () => rand(prng, 3));
  const f = (x: Float64Array) => Math.sin(4 * x[0]) + x[1] * x[2];
  // Incremental: the pool first, then observations; and observations first, then the pool.
  const a = new PoolGP(3, { lengthScale: 0.4 });
  a.addPool(pool);
  for (const x of xs) a.observe(x, f(x));
  const b = new PoolGP(3, { lengthScale: 0.4 });
  for (const x of xs) b.observe(x, f(x));
  b.addPool(pool);
  const pa = a.posterior(), pb = b.posterior();
  for (let i = 0; i < pool.length; i++) {
    assert.ok(Math.abs(pa.mean[i] - pb.mean[i]) < 1e-9);
    assert.ok(Math.abs(pa.sd[i] - pb.sd[i]) < 1e-9);
  }
});

Deno.test("PoolGP interpolates its observations and is unsure far from them", () => {
  const gp = new PoolGP(1, { lengthScale: 0.2, noise: 1e-6 });
  gp.addPool([0, 0.5, 1, 3].map((v) => Float64Array.of(v)));
  gp.observe(Float64Array.of(0), 2);
  gp.observe(Float64Array.of(1), 5);
  const { mean, sd } = gp.posterior();
  assert.ok(Math.abs(mean[0] - 2) < 1e-3 && Math.abs(mean[2] - 5) < 1e-3);
  assert.ok(sd[0] < 0.01 && sd[3] > sd[1] && sd[1] > sd[0]);
});

Deno.test("PoolGP.fit prefers a long length scale for a smooth function", () => {
  const prng = createPrng(2);
  const gp = new PoolGP(2);
  for (let i = 0; i < 25; i++) {
    const x = rand(prng, 2);
    gp.observe(x, x[0] + 0.5 * x[1]);
  }
  gp.fit([0.05, 0.2, 1, 3], [1e-4]);
  assert.ok(gp.lengthScale >= 1, `length scale ${gp.lengthScale}`);
});

Deno.test("normalCdf matches known values", () => {
  assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-7);
  assert.ok(Math.abs(normalCdf(1.959964) - 0.975) < 1e-6);
  assert.ok(Math.abs(normalCdf(-1) - 0.158655) < 1e-6);
});

Deno.test("clipAbove reads targets above it as it: a far-off bad point no longer lifts the mean", () => {
  const gp = new PoolGP(1, { lengthScale: 0.2, noise: 1e-6 });
  gp.addPool([Float64Array.of(0), Float64Array.of(0.5)]);
  for (const [x, y] of [[0, 0], [0.1, 0.1], [0.9, 10], [1, 10]]) gp.observe(Float64Array.of(x), y);
  const before = gp.posterior().mean[1];
  gp.clipAbove = 0.1;
  const after = gp.posterior().mean[1];
  assert.ok(after < before, `${after} < ${before}`);
  assert.ok(Math.abs(gp.posterior().mean[0]) < 1e-3, "an observed target below the clip is kept");
});

Deno.test("normalScores keeps the order, gives ties one score and ignores monotone maps", () => {
  const ys = [3, -1, 10, 3, 0.5];
  const z = normalScores(ys);
  assert.ok(z[1] < z[4] && z[4] < z[0] && z[0] < z[2]);
  assert.equal(z[0], z[3]);
  assert.equal(z[0], normalQuantile(0.6), "ties at ranks 2 and 3 of 0..4 share rank 2.5");
  assert.ok(Math.abs(z[1] + z[2]) < 1e-12, "symmetric about the median");
  assert.deepEqual(normalScores(ys.map((y) => Math.exp(5 * y))), z);
});

Deno.test("normalQuantile inverts normalCdf", () => {
  assert.ok(Math.abs(normalQuantile(0.975) - 1.959963985) < 1e-6);
  for (const p of [1e-4, 0.01, 0.2, 0.5, 0.7, 0.99, 0.9999]) {
    assert.ok(Math.abs(normalCdf(normalQuantile(p)) - p) < 1e-6, `p = ${p}`);
  }
  assert.equal(normalQuantile(0), -Infinity);
  assert.equal(normalQuantile(1), Infinity);
});

Deno.test("PoolGP with a transform reads the transformed targets", () => {
  const prng = createPrng(2);
  const pool = Array.from({ length: 10 }, () => rand(prng, 2));
  const xs = Array.from({ length: 8 }, () => rand(prng, 2));
  const ys = xs.map((x) => Math.exp(6 * x[0]) + x[1]);
  const a = new PoolGP(2, { lengthScale: 0.3 });
  a.transform = normalScores;
  const b = new PoolGP(2, { lengthScale: 0.3 });
  a.addPool(pool);
  b.addPool(pool);
  xs.forEach((x, i) => a.observe(x, ys[i]));
  const zs = normalScores(ys);
  xs.forEach((x, i) => b.observe(x, zs[i]));
  assert.deepEqual(a.targets(), zs);
  const pa = a.posterior(), pb = b.posterior();
  for (let i = 0; i < pool.length; i++) assert.ok(Math.abs(pa.mean[i] - pb.mean[i]) < 1e-12);
  assert.ok(Math.abs(a.logLikelihood() - b.logLikelihood()) < 1e-12);
});

Deno.test("PoolGP.fit chooses the coordinate weights with the best marginal likelihood", () => {
  // y depends on x0 only; x1 is a scrambled copy that a process reading it would have to explain.
  const prng = createPrng(3);
  const xs = Array.from({ length: 30 }, () => Float64Array.of(prng.next(), prng.next()));
  const gp = new PoolGP(2);
  for (const x of xs) gp.observe(x, Math.sin(6 * x[0]));
  const both = Float64Array.of(1, 1), first = Float64Array.of(1, 0), second = Float64Array.of(0, 1);
  gp.fit([0.1, 0.3, 1], [0.001, 0.03], [both, second, first]);
  assert.equal(gp.weights, first);
  // Distances read only the weighted coordinates.
  assert.equal(gp.k(Float64Array.of(0.2, 0), Float64Array.of(0.2, 1)), 1);
});
