import assert from "node:assert/strict";
import { depthwiseConv2d } from "../ir/nn.ts";
import { conv2d, matmul } from "../ir/workloads.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import type { Candidate } from "../ir/candidate.ts";
import type { Measurer } from "../measure/measurer.ts";
import { seededStrategy } from "../search/seeded.ts";
import { tune } from "./loop.ts";
import { defaultPerRound, defaultScheduleCandidate, taskStrategy } from "./network_tuning.ts";

Deno.test("taskStrategy takes the first given template that schedules the task, else its default one", async () => {
  const c = conv2d(1, 8, 8, 8, 8, 3, 3, 1, 1);
  const name = async (s: string, w = c, templates?: string[]) =>
    (await taskStrategy(s, w, 1, templates)).name;
  assert.equal(await name("xgb", c, ["matmul-packed", "conv2d-packed"]), "xgb conv2d-packed");
  assert.equal(await name("ga"), "ga conv2d");
  assert.equal(await name("ga", matmul(8, 8, 8), ["conv2d-packed"]), "ga matmul");
  assert.equal(await name("ansor"), "ansor");
});

Deno.test("taskStrategy falls back to random on a workload no template schedules (depthwise)", async () => {
  const s = await taskStrategy("xgb", depthwiseConv2d(1, 8, 8, 8, 3, 3, 1, 1), 1, [
    "conv2d-packed",
  ]);
  assert.equal(s.name, "random");
  assert.equal(s.strategy.propose(2).length, 2);
});

Deno.test("defaultPerRound keeps the warm-up within an eighth of the budget, between 1 and 8 trials", () => {
  assert.equal(defaultPerRound(64, 12), 1);
  assert.equal(defaultPerRound(200, 12), 2);
  assert.equal(defaultPerRound(400, 12), 4);
  assert.equal(defaultPerRound(5, 12), 1);
  assert.equal(defaultPerRound(10_000, 3), 8);
});

Deno.test("every strategy of the network study runs seeded with the default schedule, measured first", async () => {
  const w = conv2d(1, 8, 8, 8, 8, 3, 3, 1, 1);
  // A fake measurer: the default schedule is the fastest, so it stays the best.
  const seconds = (c: Candidate) =>
    c.knobs
      ? 1e-3 * (2 + c.knobs.reduce((a, k) => a + k, 0) / 100)
      : c.trace!.insts.length === 0
      ? 1e-3
      : 1e-3 * (2 + JSON.stringify(c.trace).length % 97 / 100);
  const measurer: Measurer = {
    name: "fake",
    measure: (batch) =>
      Promise.resolve(batch.map((c) => ({
        errorKind: "none" as const,
        times: [seconds(c)],
        buildSeconds: 0,
        runSeconds: 0,
      }))),
  };
  for (const name of ["random", "xgb", "xgb-rank", "ga", "ppo", "dqn", "bandit", "ansor"]) {
    const { strategy } = await taskStrategy(name, w, 1, ["conv2d-packed"]);
    const seeded = seededStrategy(strategy, [defaultScheduleCandidate(w)]);
    const store = createMemoryRecordStore();
    const workloadId = await store.upsertWorkload({ name: w.name, shape: w.shape, flops: w.flops });
    const runId = await store.startRun({
      strategy: name,
      seed: 1,
      trials: 24,
      target: "fake",
      workloadId,
      config: {},
      machine: {},
      compiler: "",
      tunebookVersion: "0",
    });
    // 6 rounds of 4: past xgb's first plan of 16, so its model trains on what it observed.
    for (let round = 0; round < 6; round++) {
      await tune({
        strategy: seeded,
        measurer,
        store,
        runId,
        trials: 4,
        batchSize: 4,
        firstTrial: (await store.candidates(runId)).length,
      });
    }
    const rows = await store.candidates(runId);
    assert.equal(rows.length, 24, name);
    const first = rows.find((r) => r.trial === 0)!;
    assert.equal(JSON.parse(first.trace).insts.length, 0, name);
    assert.equal(first.knobs ?? null, null, name);
    assert.equal((await store.best(runId))?.result.seconds, 1e-3, name);
  }
});
