import assert from "node:assert/strict";
import * as tf from "npm:@tensorflow/tfjs@4.22.0";
import { createPrng } from "../ir/prng.ts";
import { MLPRegressor } from "./mlp.ts";
import type { Matrix } from "./regressor.ts";

/** Rows of uniform features in [-2, 2); y = x0 * x1 + sin(x2) (+ `offset(row)`). */
function dataset(
  rows: number,
  cols: number,
  seed: number,
  offset: (row: number) => number = () => 0,
): { x: Matrix; y: Float32Array; truth: Float32Array } {
  const prng = createPrng(seed);
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = 4 * prng.next() - 2;
  const truth = new Float32Array(rows);
  const y = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    const v = data[r * cols] * data[r * cols + 1] + Math.sin(data[r * cols + 2]);
    truth[r] = v;
    y[r] = v + offset(r);
  }
  return { x: { data, rows, cols }, y, truth };
}

function r2(pred: Float32Array, y: Float32Array): number {
  const mean = y.reduce((a, b) => a + b, 0) / y.length;
  let res = 0, tot = 0;
  for (let i = 0; i < y.length; i++) {
    res += (y[i] - pred[i]) ** 2;
    tot += (y[i] - mean) ** 2;
  }
  return 1 - res / tot;
}

Deno.test("mlp learns y = x0*x1 + sin(x2) on held-out rows", async () => {
  const train = dataset(2000, 5, 1);
  const test = dataset(500, 5, 2);
  const mlp = new MLPRegressor({ hidden: [32, 32], learningRate: 3e-3, epochs: 25, seed: 3 });
  assert.equal(mlp.name, "mlp");
  await mlp.fit(train.x, train.y);
  const score = r2(await mlp.predict(test.x), test.y);
  mlp.dispose();
  assert.ok(score > 0.8, `R^2 ${score.toFixed(3)}`);
});

Deno.test("mlp: the same seed gives identical predictions, another seed does not", async () => {
  const { x, y } = dataset(300, 6, 4);
  const opts = { hidden: [16, 16], epochs: 3, minSteps: 0, batchSize: 64 };
  const predictions = [];
  for (const seed of [7, 7, 8]) {
    const mlp = new MLPRegressor({ ...opts, seed });
    await mlp.fit(x, y);
    predictions.push(await mlp.predict(x));
    mlp.dispose();
  }
  assert.deepEqual(predictions[0], predictions[1]);
  assert.notDeepEqual(predictions[0], predictions[2]);
});

Deno.test("mlp: save + load predicts identically and keeps the options", async () => {
  const { x, y } = dataset(300, 6, 5);
  const mlp = new MLPRegressor({ hidden: [16, 8], activation: "tanh", epochs: 2, seed: 1 });
  await mlp.fit(x, y);
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/sub/model.json`;
    await mlp.save(path);
    const loaded = await MLPRegressor.load(path);
    assert.deepEqual(await loaded.predict(x), await mlp.predict(x));
    assert.deepEqual(loaded.options, mlp.options);
    // A loaded model can keep training with its stored normalisation.
    await loaded.fit(x, y, { continueTraining: true });
    assert.equal((await loaded.predict(x)).length, x.rows);
    loaded.dispose();
  } finally {
    mlp.dispose();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mlp: no tensor leak across fit/predict rounds; dispose frees everything", async () => {
  const before = tf.memory().numTensors;
  const { x, y } = dataset(200, 4, 6);
  const opts = { hidden: [8], epochs: 1, minSteps: 0, batchSize: 64, seed: 2 };
  const mse = new MLPRegressor(opts);
  const rank = new MLPRegressor({ ...opts, loss: "rank" });
  const counts: number[] = [];
  for (let round = 0; round < 3; round++) {
    await mse.fit(x, y, { continueTraining: round > 0 });
    await mse.predict(x);
    await rank.fit(x, y, { groups: [100, 100], continueTraining: round === 1 });
    await rank.predict(x);
    counts.push(tf.memory().numTensors);
  }
  assert.deepEqual(counts, [counts[0], counts[0], counts[0]]);
  mse.dispose();
  rank.dispose();
  assert.equal(tf.memory().numTensors, before);
  assert.throws(() => mse.predict(x), /dispose/);
});

Deno.test("mlp rank loss orders held-out pairs, respecting query groups", async () => {
  // Each group of 50 rows has its own target offset that no feature shows: only the order
  // within a group is learnable, and the loss must compare rows of one group only.
  const train = dataset(2000, 5, 11, (r) => 10 * Math.floor(r / 50));
  const test = dataset(400, 5, 12);
  const groups = Array.from({ length: 40 }, () => 50);
  const mlp = new MLPRegressor({
    hidden: [32, 32],
    loss: "rank",
    learningRate: 3e-3,
    epochs: 20,
    seed: 5,
  });
  assert.equal(mlp.name, "mlp-rank");
  await mlp.fit(train.x, train.y, { groups });
  const pred = await mlp.predict(test.x);
  mlp.dispose();
  let right = 0, total = 0;
  for (let i = 0; i < test.x.rows; i++) {
    for (let j = i + 1; j < test.x.rows; j++) {
      if (test.truth[i] === test.truth[j]) continue;
      total++;
      if ((pred[i] > pred[j]) === (test.truth[i] > test.truth[j])) right++;
    }
  }
  assert.ok(right / total > 0.8, `concordance ${(right / total).toFixed(3)}`);
});

Deno.test("mlp rejects bad input", async () => {
  const { x, y } = dataset(10, 3, 1);
  assert.throws(() => new MLPRegressor({ hidden: [0] }), RangeError);
  assert.throws(() => new MLPRegressor({ loss: "huber" as "mse" }), RangeError);
  const mlp = new MLPRegressor({ epochs: 1, minSteps: 0 });
  assert.throws(() => mlp.predict(x), /not been fitted/);
  assert.throws(() => mlp.fit(x, y.subarray(1)), RangeError);
  assert.throws(() => mlp.fit(x, y, { groups: [4, 4] }), RangeError);
  await mlp.fit(x, y);
  const wide = { data: new Float32Array(40), rows: 10, cols: 4 };
  assert.throws(() => mlp.predict(wide), RangeError);
  assert.throws(() => mlp.fit(wide, y, { continueTraining: true }), RangeError);
  mlp.dispose();
});
