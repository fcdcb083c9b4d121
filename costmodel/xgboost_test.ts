import assert from "node:assert/strict";
import { join } from "node:path";
import { createPrng, type Prng } from "../ir/prng.ts";
import type { Matrix } from "./regressor.ts";
import { XGBoostError, XGBoostRegressor } from "./xgboost.ts";
import { xgboostVersion } from "./_xgboost_ffi.ts";

/** `rows` x `cols` uniform [0, 1) features. */
function features(prng: Prng, rows: number, cols: number): Matrix {
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = prng.next();
  return { data, rows, cols };
}

/** y = x0 * x1 + step(x2 > 0.5) */
function target(x: Matrix): Float32Array {
  const y = new Float32Array(x.rows);
  for (let i = 0; i < x.rows; i++) {
    const r = x.data.subarray(i * x.cols, (i + 1) * x.cols);
    y[i] = r[0] * r[1] + (r[2] > 0.5 ? 1 : 0);
  }
  return y;
}

function mse(pred: Float32Array, y: Float32Array): number {
  let s = 0;
  for (let i = 0; i < y.length; i++) s += (pred[i] - y[i]) ** 2;
  return s / y.length;
}

function rSquared(pred: Float32Array, y: Float32Array): number {
  const mean = y.reduce((a, b) => a + b, 0) / y.length;
  let tot = 0;
  for (const v of y) tot += (v - mean) ** 2;
  return 1 - mse(pred, y) * y.length / tot;
}

Deno.test("xgboost: the Debian library is XGBoost 1.x", () => {
  const [major, minor] = xgboostVersion();
  assert.equal(major, 1);
  assert.ok(minor >= 6, `minor ${minor}`);
});

Deno.test("xgboost: regression learns x0*x1 + step(x2) on held-out rows", () => {
  const prng = createPrng(1);
  const train = features(prng, 2000, 6), test = features(prng, 500, 6);
  const r = new XGBoostRegressor();
  try {
    assert.equal(r.name, "xgb");
    r.fit(train, target(train));
    assert.equal(r.boostedRounds, 100);
    assert.equal(r.numFeatures, 6);
    const pred = r.predict(test);
    assert.ok(pred instanceof Float32Array);
    assert.equal(pred.length, 500);
    const r2 = rSquared(pred, target(test));
    assert.ok(r2 > 0.9, `R^2 ${r2}`);
  } finally {
    r.dispose();
  }
});

Deno.test("xgboost: NaN is missing", () => {
  const prng = createPrng(2);
  const x = features(prng, 300, 3);
  const y = target(x);
  for (let i = 0; i < x.data.length; i += 7) x.data[i] = NaN;
  const r = new XGBoostRegressor({ rounds: 10 });
  try {
    r.fit(x, y);
    assert.ok(r.predict(x).every(Number.isFinite));
  } finally {
    r.dispose();
  }
});

Deno.test("xgboost: rank:pairwise orders held-out pairs within groups", () => {
  const prng = createPrng(3);
  const groupSize = 20, groups = 100, testGroups = 30;
  const make = (n: number) => {
    const x = features(prng, n * groupSize, 5);
    const y = target(x);
    // Each group has its own offset: ranking must ignore it.
    for (let g = 0; g < n; g++) {
      const offset = 100 * prng.next();
      for (let i = 0; i < groupSize; i++) y[g * groupSize + i] += offset;
    }
    return { x, y, groups: new Array(n).fill(groupSize) };
  };
  const train = make(groups), test = make(testGroups);
  const r = new XGBoostRegressor({ objective: "rank:pairwise" });
  try {
    assert.equal(r.name, "xgb-rank");
    r.fit(train.x, train.y, { groups: train.groups });
    const pred = r.predict(test.x);
    let right = 0, pairs = 0;
    for (let g = 0; g < testGroups; g++) {
      for (let i = g * groupSize; i < (g + 1) * groupSize; i++) {
        for (let j = i + 1; j < (g + 1) * groupSize; j++) {
          if (test.y[i] === test.y[j]) continue;
          pairs++;
          if ((pred[i] - pred[j]) * (test.y[i] - test.y[j]) > 0) right++;
        }
      }
    }
    assert.ok(right / pairs > 0.85, `pairwise accuracy ${right / pairs}`);
  } finally {
    r.dispose();
  }
});

Deno.test("xgboost: continueTraining adds rounds to the same booster", () => {
  const prng = createPrng(4);
  const x = features(prng, 1000, 4), y = target(x);
  const r = new XGBoostRegressor({ rounds: 5 });
  try {
    r.fit(x, y);
    const before = mse(r.predict(x), y);
    r.fit(x, y, { continueTraining: true });
    assert.equal(r.boostedRounds, 10);
    const after = mse(r.predict(x), y);
    assert.ok(after < before, `${after} !< ${before}`);
    // More rounds on new data, still the same booster.
    const x2 = features(prng, 500, 4);
    r.fit(x2, target(x2), { continueTraining: true });
    assert.equal(r.boostedRounds, 15);
    // Without continueTraining: a fresh model.
    r.fit(x, y);
    assert.equal(r.boostedRounds, 5);
  } finally {
    r.dispose();
  }
});

Deno.test("xgboost: save + load predicts identically (JSON and binary)", async () => {
  const prng = createPrng(5);
  const x = features(prng, 400, 4), y = target(x);
  const dir = await Deno.makeTempDir();
  const r = new XGBoostRegressor({ objective: "rank:pairwise", rounds: 20 });
  try {
    r.fit(x, y, { groups: [100, 100, 200] });
    const pred = r.predict(x);
    for (const file of ["model.json", "model.bin"]) {
      const path = join(dir, file);
      await r.save(path);
      const loaded = XGBoostRegressor.load(path);
      try {
        assert.equal(loaded.name, "xgb-rank");
        assert.equal(loaded.boostedRounds, 20);
        assert.deepEqual(loaded.predict(x), pred);
      } finally {
        loaded.dispose();
      }
    }
    const json = JSON.parse(await Deno.readTextFile(join(dir, "model.json")));
    assert.equal(json.learner.objective.name, "rank:pairwise");
  } finally {
    r.dispose();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("xgboost: C-API failures throw XGBoostError with XGBoost's message", () => {
  const prng = createPrng(6);
  const x = features(prng, 200, 4), y = target(x);
  const r = new XGBoostRegressor({ rounds: 3 });
  try {
    r.fit(x, y);
    const pred = r.predict(x);
    assert.throws(() => r.predict(features(prng, 10, 5)), (e) => {
      assert.ok(e instanceof XGBoostError);
      assert.equal(e.fn, "XGBoosterPredict");
      assert.match(e.message, /Number of columns does not match number of features/);
      assert.doesNotMatch(e.message, /Stack trace/);
      return true;
    });
    // A failed fresh fit keeps the previous model.
    const bad = new XGBoostRegressor({ maxDepth: -1, rounds: 3 });
    assert.throws(() => bad.fit(x, y), (e) => {
      assert.ok(e instanceof XGBoostError);
      assert.match(e.message, /max_depth/);
      return true;
    });
    bad.dispose();
    const odd = new XGBoostRegressor({ rounds: 3, params: { eta: "fast" } });
    assert.throws(() => odd.fit(x, y), XGBoostError);
    odd.dispose();
    assert.deepEqual(r.predict(x), pred);
    assert.throws(() => XGBoostRegressor.load("/nonexistent/model.json"), XGBoostError);
  } finally {
    r.dispose();
  }
});

Deno.test("xgboost: argument checks and dispose", () => {
  const prng = createPrng(7);
  const x = features(prng, 50, 3), y = target(x);
  const r = new XGBoostRegressor({ rounds: 2 });
  assert.throws(() => r.predict(x), /before fit/);
  assert.throws(() => r.fit(x, y.subarray(1)), RangeError);
  assert.throws(() => r.fit({ ...x, rows: 49 }, y.subarray(1)), RangeError);
  assert.throws(() => r.fit(x, y, { groups: [20, 20] }), /sum to 40/);
  r.fit(x, y);
  assert.equal(r.predict({ data: new Float32Array(0), rows: 0, cols: 3 }).length, 0);
  r.dispose();
  r.dispose();
  assert.equal(r.fitted, false);
  assert.throws(() => r.predict(x), /disposed/);
  assert.throws(() => r.fit(x, y), /disposed/);
  assert.throws(() => new XGBoostRegressor({ rounds: 0 }), RangeError);
});
