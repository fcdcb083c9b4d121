/** Issue 16's strategies on replayed caches: seeded runs, judged by the budget-aggregated score. */
import assert from "node:assert/strict";
import { budgetScore, expectedRandomFraction, meanCurve } from "../search/score.ts";
import { createStrategy } from "./strategies.ts";
import { replaySpaceFromFile } from "../search/replay.ts";
import { replayMeasurer } from "../measure/replay.ts";
import { runStrategy, type RunTrace } from "./run_strategy.ts";

const LO = 25, HI = 100, SEEDS = 8;

for (const cache of ["pnpoly_RTX_3090", "resnet18_conv2_cpu"]) {
  Deno.test(`on ${cache}, bo, auto and the baselines beat random search over 25-100 evaluations`, async () => {
    const r = await replaySpaceFromFile(cache);
    const times: number[] = [];
    for (let i = 0; i < r.space.size; i++) {
      const s = r.evaluateIndex(i).seconds;
      if (s !== undefined) times.push(s);
    }
    const random = Array.from(
      { length: HI - LO + 1 },
      (_, k) => expectedRandomFraction(times, r.allowedCount, LO + k),
    );
    for (const name of ["bo", "auto", "greedy_ils", "dual_annealing", "diff_evo", "pso"]) {
      const runs: RunTrace[] = [];
      for (let seed = 0; seed < SEEDS; seed++) {
        const s = await createStrategy(name, r.space, { seed, candidateOf: r.candidateOf });
        runs.push(await runStrategy(s, replayMeasurer(r), { budget: HI }));
      }
      const score = budgetScore(meanCurve(runs, r.optimum, LO, HI), random);
      assert.ok(score > 0, `${name} on ${cache}: score ${score.toFixed(3)}`);
    }
  });
}
