import assert from "node:assert/strict";
import {
  baselineCurve,
  isotonicDecreasing,
  methodologyRange,
  methodologyScore,
  pchip,
  performanceCurve,
  roundHalfEven,
  spaceScore,
  standardisedCurve,
} from "./methodology.ts";

// 19 valid configurations of 1..19 ms, each costing 1 s to measure.
const SPACE = {
  values: Array.from({ length: 19 }, (_, i) => 19 - i),
  validSeconds: new Array(19).fill(1),
  invalidSeconds: [],
};

Deno.test("the time range of a small space, worked out by hand", () => {
  // opt 1, median 10. Start target 1 + 9 * 0.99 = 9.91: worst-first index 10 (value 9),
  // F = ceil(10 / (20 - 10)) = 1. End target 1 + 9 * 0.05 = 1.45: index 18 is the optimum, so
  // 17, F = ceil(17 / 3) = 6. Median time 1 s: 1..6 s; budget 1.1 * 6.
  const r = methodologyRange(SPACE, { resolution: 6 });
  assert.equal(r.optimum, 1);
  assert.equal(r.median, 10);
  assert.equal(r.fStart, 1);
  assert.equal(r.fEnd, 6);
  assert.deepEqual(r.grid, [1, 2, 3, 4, 5, 6]);
  assert.ok(Math.abs(r.timeLimit - 6.6) < 1e-12);
  assert.equal(r.tau, 1);
  // tau: mean valid time + (invalid / all) * mean invalid time; the median counts both.
  const withInvalid = { ...SPACE, invalidSeconds: [3] };
  const r2 = methodologyRange(withInvalid, { resolution: 6 });
  assert.ok(Math.abs(r2.tau - (1 + 3 / 20)) < 1e-12);
  assert.equal(r2.medianSeconds, 1);
  assert.throws(() => methodologyRange(SPACE, { percentile: 1.5 }), /percentile must be in/);
  assert.throws(
    () => methodologyRange({ values: [], validSeconds: [], invalidSeconds: [] }),
    /space\.values/,
  );
});

Deno.test("the calculated random-search baseline, worked out by hand", () => {
  // M = t / tau = 1..6; B(M) = worst-first[min(18, round(20 M / (M + 1)))] = 19 - index:
  // M=1: 10 -> 9; M=2: 13.3 -> 13 -> 6; M=3: 15 -> 4; M=4: 16 -> 3; M=5: 16.7 -> 17 -> 2; M=6: 17.1 -> 2.
  const r = methodologyRange(SPACE, { resolution: 6 });
  const b = baselineCurve(SPACE, r);
  assert.deepEqual(b.map((x) => Math.round(x * 1e9) / 1e9), [9, 6, 4, 3, 2, 2]);
});

Deno.test("the score of flat curves against that baseline, worked out by hand", () => {
  const r = methodologyRange(SPACE, { resolution: 6 });
  const b = baselineCurve(SPACE, r);
  // Two runs that find 2 ms at once and keep it: every point has rank 1, the curve is 2 ms.
  const runs = [
    { time: [0.9, 2, 4, 6.5], best: [2, 2, 2, 2] },
    { time: [0.95, 3, 6.2], best: [2, 2, 2] },
  ];
  const c = performanceCurve(runs, SPACE, r);
  assert.deepEqual(c, [2, 2, 2, 2, 2, 2]);
  // S = (2 - b) / (1 - b) = 7/8, 4/5, 2/3, 1/2, 0, 0.
  const s = standardisedCurve(c, b, 1);
  const want = [7 / 8, 4 / 5, 2 / 3, 1 / 2, 0, 0];
  s.forEach((x, k) => assert.ok(Math.abs(x - want[k]) < 1e-9, `${k}: ${x}`));
  const mean = want.reduce((a, x) => a + x, 0) / 6;
  assert.ok(Math.abs(spaceScore(c, b, 1) - mean) < 1e-9);
  // The optimum at once scores 1; the worst configuration throughout far below 0.
  const top = performanceCurve(
    [{ time: [1, 7], best: [1, 1] }, { time: [1, 7], best: [1, 1] }],
    SPACE,
    r,
  );
  assert.equal(spaceScore(top, b, 1), 1);
  const worst = [19, 19, 19, 19, 19, 19];
  const w = [-10 / 8, -13 / 5, -15 / 3, -16 / 2, -17, -17];
  assert.ok(Math.abs(spaceScore(worst, b, 1) - w.reduce((a, x) => a + x, 0) / 6) < 1e-9);
  // Over spaces: averaged by grid index, then over the grid.
  const agg = methodologyScore([s, standardisedCurve(top, b, 1)]);
  assert.ok(Math.abs(agg.score - (mean + 1) / 2) < 1e-9);
  assert.throws(() => performanceCurve([{ time: [100], best: [2] }], SPACE, r), /time range/);
});

Deno.test("a random search scores near 0 and the curve is reproducible by its seed", () => {
  const n = 400;
  const space = {
    values: Array.from({ length: n }, (_, i) => 1 + i),
    validSeconds: new Array(n).fill(1),
    invalidSeconds: [],
  };
  const r = methodologyRange(space, { resolution: 100 });
  const b = baselineCurve(space, r);
  let state = 7;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const runs = Array.from({ length: 25 }, () => {
    const order = space.values.map((v) => ({ v, k: next() })).sort((x, y) => x.k - y.k);
    let best = Infinity;
    const time: number[] = [], bests: number[] = [];
    order.slice(0, Math.ceil(r.timeLimit)).forEach(({ v }, i) => {
      best = Math.min(best, v);
      time.push(i + 1);
      bests.push(best);
    });
    return { time, best: bests };
  });
  const c = performanceCurve(runs, space, r, { seed: 3 });
  assert.deepEqual(performanceCurve(runs, space, r, { seed: 3 }), c);
  const score = spaceScore(c, b, 1);
  assert.ok(Math.abs(score) < 0.15, `random search scored ${score}`);
});

Deno.test("isotonic fit, PCHIP and rounding match their reference definitions", () => {
  // Pool adjacent violators, non-increasing: 3, 1, 2 -> 3, 1.5, 1.5; linear between, clipped outside.
  assert.deepEqual(isotonicDecreasing([1, 2, 3], [3, 1, 2], [1, 1, 1], [0, 1.5, 3, 9]), [
    3,
    2.25,
    1.5,
    1.5,
  ]);
  // Equal x merge by weight: (1, 4) x3 and (1, 0) x1 -> 3.
  assert.deepEqual(isotonicDecreasing([1, 1], [4, 0], [3, 1], [1]), [3]);
  // SciPy's PchipInterpolator([0, 1, 2], [0, 1, 4])(0.5) = 0.3125.
  assert.ok(Math.abs(pchip([0, 1, 2], [0, 1, 4], [0.5])[0] - 0.3125) < 1e-12);
  assert.deepEqual([0.5, 1.5, 2.5, -0.5, 2.4].map(roundHalfEven), [0, 2, 2, -0, 2]);
});
