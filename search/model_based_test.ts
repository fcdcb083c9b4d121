import assert from "node:assert/strict";
import type { CostModel, Sample } from "../costmodel/model.ts";
import { randomModel } from "../costmodel/random_model.ts";
import { KnobSpace } from "./knobs.ts";
import { modelBasedTuner } from "./model_based.ts";
import type { Candidate } from "./strategy.ts";

const space = new KnobSpace(
  [0, 1, 2, 3].map((i) => ({
    name: `k${i}`,
    kind: "other" as const,
    options: [0, 1, 2, 3, 4, 5, 6, 7],
  })),
);
const cost = (p: number[]) => 1 + p.reduce((a, v, i) => a + (v - (i + 2)) ** 2, 0);
const evaluate = (cs: Candidate[]) =>
  cs.map((c) =>
    c.knobs![0] === 7 ? { candidate: c, errorKind: "runtime_error" as const } : {
      candidate: c,
      errorKind: "none" as const,
      seconds: cost(c.knobs!),
    }
  );

/** A model that learns nothing but knows the truth once it has seen 8 samples. */
function oracle(): CostModel {
  let seen = 0;
  return {
    name: "oracle",
    update(s: Sample[]) {
      seen += s.length;
    },
    predict: (cs) => cs.map((c) => (seen >= 8 ? 1 / cost(c.knobs!) : 0)),
  };
}

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
