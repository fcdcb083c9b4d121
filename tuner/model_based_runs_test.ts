/**
 * The model-based tuner (search/model_based.ts) run to budgets through the
 * tuning loop: it follows its model, stops on an exhausted space, and spends
 * fewer evaluations on failures with a validity classifier.
 */
import assert from "node:assert/strict";
import { randomModel } from "../costmodel/random_model.ts";
import {
  mbCost as cost,
  mbEvaluate as evaluate,
  mbSpace as space,
  oracle,
} from "../search/_testing_model_based.ts";
import { KnobSpace } from "../ir/knobs.ts";
import { modelBasedTuner } from "../search/model_based.ts";
import { randomKnobSearch } from "../search/random.ts";
import { validityClassifier } from "../search/validity.ts";
import { runStrategy } from "./run_strategy.ts";

Deno.test("the model-based tuner follows its model and beats random search with a good one", async () => {
  const budget = 40;
  let tuned = 0, random = 0;
  for (let seed = 0; seed < 5; seed++) {
    const s = modelBasedTuner(space, { seed, model: oracle(), planSize: 16, saIters: 100 });
    tuned += Math.min(...(await runStrategy(s, evaluate, { budget })).best);
    random += Math.min(
      ...(await runStrategy(randomKnobSearch(space, { seed }), evaluate, { budget })).best,
    );
  }
  assert.ok(tuned < random, `model ${tuned / 5} vs random ${random / 5}`);
  assert.equal(tuned / 5, 1, "a perfect model finds the optimum");
});

Deno.test("the model-based tuner stops when a small space is exhausted", async () => {
  const tiny = new KnobSpace([{ name: "a", kind: "other", options: [1, 2, 3] }]);
  const s = modelBasedTuner(tiny, { seed: 1, model: randomModel(1), planSize: 2 });
  const r = await runStrategy(
    s,
    (cs) => cs.map((c) => ({ candidate: c, errorKind: "none" as const, seconds: 1 })),
    { budget: 10 },
  );
  assert.equal(r.evals, 3);
});

Deno.test("with a validity classifier the model-based tuner spends fewer evaluations on failures", async () => {
  // k1 >= 5 never runs; a random model would pick such points as often as any.
  const failing = (p: number[]) => p[1] >= 5;
  const failures = async (withValidity: boolean) => {
    let n = 0;
    for (let seed = 0; seed < 5; seed++) {
      const s = modelBasedTuner(space, {
        seed,
        model: randomModel(seed),
        planSize: 16,
        saIters: 20,
        validity: withValidity ? validityClassifier(space) : undefined,
      });
      await runStrategy(s, (cs) =>
        cs.map((c) => {
          if (!failing(c.knobs!)) {
            return { candidate: c, errorKind: "none" as const, seconds: cost(c.knobs!) };
          }
          n++;
          return { candidate: c, errorKind: "runtime_error" as const };
        }), { budget: 96, batch: 16 });
    }
    return n;
  };
  const blind = await failures(false), learned = await failures(true);
  assert.ok(learned < 0.7 * blind, `failures: ${learned} with the classifier vs ${blind} without`);
});
