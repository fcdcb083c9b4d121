import assert from "node:assert/strict";
import { createPrng } from "../ir/prng.ts";
import { budgetScore, expectedRandomFraction, meanCurve, rankAcrossSpaces } from "./score.ts";

Deno.test("expectedRandomFraction equals a brute-force average over random draws", () => {
  const times = [1, 1.5, 2, 4, 8].map((t) => t * 1e-3);
  const allowed = 9; // four invalid points
  const prng = createPrng(1);
  for (const b of [1, 3, 6, 9]) {
    let sum = 0;
    const n = 40000;
    for (let r = 0; r < n; r++) {
      const idx = Array.from({ length: allowed }, (_, i) => i);
      let best = Infinity;
      for (let k = 0; k < b; k++) {
        const j = k + prng.int(allowed - k);
        [idx[k], idx[j]] = [idx[j], idx[k]];
        if (idx[k] < times.length) best = Math.min(best, times[idx[k]]);
      }
      sum += Number.isFinite(best) ? times[0] / best : 0;
    }
    const e = expectedRandomFraction(times, allowed, b);
    assert.ok(Math.abs(e - sum / n) < 0.01, `b=${b}: ${e} vs ${sum / n}`);
  }
  assert.equal(expectedRandomFraction(times, allowed, allowed), 1);
});

Deno.test("budgetScore is 0 for random, 1 for the optimum at once, negative when worse", () => {
  const random = [0.5, 0.6, 0.7];
  assert.equal(budgetScore(random, random), 0);
  assert.equal(budgetScore([1, 1, 1], random), 1);
  assert.ok(budgetScore([0.4, 0.5, 0.6], random) < 0);
});

Deno.test("meanCurve averages fractions of optimum over seeds at every budget", () => {
  const runs = [
    { best: [4, 2, 2], wall: [0, 0, 0], evals: 3 },
    { best: [Infinity, 4, 1], wall: [0, 0, 0], evals: 3 },
  ];
  assert.deepEqual(meanCurve(runs, 1, 1, 3), [0.125, 0.375, 0.75]);
});

Deno.test("rankAcrossSpaces ranks by mean rank, ties sharing the mean rank", () => {
  const r = rankAcrossSpaces({
    a: { x: 0.5, y: 0.5, z: 0.1 },
    b: { x: 0.9, y: 0.2, z: 0.3 },
  });
  assert.deepEqual(r.map((row) => row.strategy), ["x", "y", "z"]);
  assert.equal(r[0].mean_rank, (1.5 + 1) / 2);
  assert.equal(r[1].mean_rank, (1.5 + 3) / 2);
  assert.equal(r[2].mean_score, 0.2);
});
