import assert from "node:assert/strict";
import type { CostModel } from "../costmodel/model.ts";
import { randomModel } from "../costmodel/random_model.ts";
import { mbEvaluate as evaluate, mbSpace as space, oracle } from "./_testing_model_based.ts";
import { modelBasedTuner } from "./model_based.ts";
import type { Candidate } from "./strategy.ts";

Deno.test("the model-based tuner is reproducible, never repeats a point and survives failures", async () => {
  const run = async () => {
    const s = modelBasedTuner(space, { seed: 3, model: randomModel(3), planSize: 8, saIters: 20 });
    const seen: number[] = [];
    for (let r = 0; r < 4; r++) {
      const cs = s.propose(8);
      seen.push(...cs.map((c) => space.index(c.knobs!)));
      await s.observe(evaluate(cs));
    }
    return seen;
  };
  const a = await run();
  assert.deepEqual(a, await run());
  assert.equal(new Set(a).size, a.length);
});

Deno.test("the model-based tuner's annealing builds candidates only for what it proposes", async () => {
  let built = 0, tracesRead = 0;
  const candidateOf = (knobs: number[]): Candidate => {
    built++;
    return { knobs, trace: { version: 1, workload: { name: "t", shape: [] }, insts: [] } };
  };
  const knobsOnly = oracle();
  const s = modelBasedTuner(space, { seed: 2, model: knobsOnly, planSize: 8, candidateOf });
  for (let round = 0; round < 4; round++) await s.observe(evaluate(s.propose(8)));
  assert.equal(built, 32);
  // A model whose features read traces still gets them, built on demand.
  const traceModel: CostModel = {
    name: "trace",
    update() {},
    predict: (cs) => cs.map((c) => (c.trace ? tracesRead++ : 0)),
  };
  const t = modelBasedTuner(space, { seed: 2, model: traceModel, planSize: 8, candidateOf });
  for (let round = 0; round < 2; round++) await t.observe(evaluate(t.propose(8)));
  assert.ok(tracesRead > 0);
});
