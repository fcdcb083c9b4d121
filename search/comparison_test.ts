import assert from "node:assert/strict";
import {
  compareRows,
  fractionAt,
  fractionBand,
  fractionOverWall,
  reachRows,
  reachTable,
  type RunTrace,
  samplesToReach,
  summary,
} from "./comparison.ts";
import { replaySpaceFromFile } from "./replay.ts";
import { runStrategy } from "../tuner/run_strategy.ts";
import { createStrategy } from "../tuner/strategies.ts";

Deno.test("fraction of optimum and quartiles", () => {
  const run = { best: [4, 2, 2, 1], wall: [0, 0, 0, 0], evals: 4 };
  assert.equal(fractionAt(run, 1, 1), 0.25);
  assert.equal(fractionAt(run, 4, 1), 1);
  assert.equal(fractionAt({ best: [Infinity], wall: [0], evals: 1 }, 1, 1), 0);
  assert.deepEqual(summary([1, 2, 3, 4]), { mean: 2.5, median: 2.5, p25: 1.75, p75: 3.25 });
  const rows = compareRows(new Map([["x", [run, run]]]), [2, 4], 1);
  assert.equal(rows.length, 2);
  assert.equal(rows[1].mean_fraction, 1);
  assert.equal(rows[0].mean_evals, 2);
});

Deno.test("samples to reach 95% of the optimum: first evaluation within 1/0.95 of it", () => {
  const run = (best: number[]) => ({ best, wall: best.map(() => 0), evals: best.length });
  const a = run([Infinity, 2, 1.2, 1.05, 1]);
  assert.equal(samplesToReach(a, 1, 0.95), 4); // 1/1.05 = 0.952
  assert.equal(samplesToReach(a, 1, 1), 5);
  assert.equal(samplesToReach(run([3, 2]), 1), undefined);
  const rows = reachRows(new Map([["s", [a, a, run([3, 2])]]]), 1);
  assert.deepEqual(
    { reached: rows[0].reached, median: rows[0].median_samples, p75: rows[0].p75 },
    { reached: 2, median: 4, p75: Infinity },
  );
  assert.match(reachTable(rows), /\| s \| 2\/3 \| 4 \| 4 \| never \|/);
});

Deno.test("fraction of optimum against wall seconds uses only evaluations finished by then", () => {
  const a = { best: [4, 2, 1], wall: [1, 2, 3], evals: 3 };
  const b = { best: [1], wall: [0.5], evals: 1 };
  const band = fractionOverWall([a, b], 1, 3, 3);
  assert.deepEqual(band.x, [1, 2, 3]);
  // a: 1/4, 1/2, 1 at t = 1, 2, 3; b: 1 from t = 0.5.
  assert.deepEqual(band.median, [0.625, 0.75, 1]);
});

Deno.test("the plotted band and the table agree: same median and quartiles at every budget", async () => {
  // Replayed runs of two strategies, and runs that ended after 1 or 2 evaluations (the plot used
  // to drop those; the table keeps a run's final value, and now so does the band).
  const small = await replaySpaceFromFile("pnpoly_RTX_3090");
  const runs = new Map<string, RunTrace[]>();
  for (const name of ["random", "sa"]) {
    const list: RunTrace[] = [];
    for (let seed = 0; seed < 6; seed++) {
      const st = await createStrategy(name, small.space, {
        seed,
        candidateOf: small.candidateOf,
      });
      list.push(await runStrategy(st, (cs) => small.measure(cs), { budget: 40 }));
    }
    runs.set(name, list);
  }
  const ended: RunTrace = { best: [2 * small.optimum, small.optimum], wall: [0, 0], evals: 2 };
  runs.set("ended", [ended, { best: [Infinity], wall: [0], evals: 1 }, ended]);
  const budgets = [1, 5, 10, 25, 40];
  const rows = compareRows(runs, budgets, small.optimum);
  for (const [name, list] of runs) {
    const band = fractionBand(list, small.optimum, budgets);
    budgets.forEach((b, i) => {
      const row = rows.find((r) => r.strategy === name && r.budget === b)!;
      assert.equal(band.median[i], row.median_fraction, `${name} at ${b}`);
      assert.equal(band.p25[i], row.p25, `${name} at ${b}`);
      assert.equal(band.p75[i], row.p75, `${name} at ${b}`);
    });
  }
  // The ended runs: at 40 evaluations the median is the final 1.0 of the two that found the optimum.
  assert.equal(fractionBand(runs.get("ended")!, small.optimum, [40]).median[0], 1);
});
