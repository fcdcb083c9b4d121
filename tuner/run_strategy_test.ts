/**
 * runStrategy: one strategy run to a budget of distinct evaluations through
 * the tuning loop, on replayed data.
 */
import assert from "node:assert/strict";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import { createStrategy, KNOB_STRATEGY_NAMES, TRANSFER_STRATEGIES } from "./strategies.ts";
import { replaySpaceFromFile } from "../search/replay.ts";
import { replayMeasurer } from "../measure/replay.ts";
import type { Candidate, Observation, Strategy } from "../search/strategy.ts";
import { runStrategy, runTrace } from "./run_strategy.ts";

const replay = await replaySpaceFromFile("pnpoly_RTX_3090");
const evaluate = (cs: Candidate[]) => replay.measure(cs);

Deno.test("every strategy is reproducible by seed on replayed data", async () => {
  for (const name of KNOB_STRATEGY_NAMES.filter((n) => !TRANSFER_STRATEGIES.includes(n))) {
    const run = async () =>
      runStrategy(
        await createStrategy(name, replay.space, { seed: 4, candidateOf: replay.candidateOf }),
        evaluate,
        {
          budget: 80,
        },
      );
    const a = await run(), b = await run();
    assert.deepEqual(a.best, b.best, name);
    assert.equal(a.evals, 80, name);
  }
});

Deno.test("a budget counts distinct evaluations, invalid ones included; re-proposals are free", async () => {
  let calls = 0;
  const counted = (cs: Candidate[]) => {
    calls += cs.length;
    return evaluate(cs);
  };
  // A strategy that proposes the same two points forever, then new ones.
  let round = 0;
  const stubborn: Strategy = {
    name: "stubborn",
    propose: () => {
      round++;
      const fixed = [replay.space.point(0), replay.space.point(1)];
      return (round % 3 === 0 ? [replay.space.point(round)] : fixed).map((knobs) => ({ knobs }));
    },
    observe: (_: Observation[]) => {},
  };
  const r = await runStrategy(stubborn, counted, { budget: 10 });
  assert.equal(r.evals, 10);
  assert.equal(calls, 10, "each configuration evaluated once");
  assert.equal(r.best.length, 10);
});

Deno.test("runStrategy() through a replay's measurer gives the curve of its evaluator", async () => {
  const make = () =>
    createStrategy("ga", replay.space, { seed: 2, candidateOf: replay.candidateOf });
  const a = await runStrategy(await make(), replayMeasurer(replay), { budget: 60 });
  const b = await runStrategy(await make(), evaluate, { budget: 60 });
  assert.deepEqual(a.best, b.best);
  assert.equal(a.evals, 60);
});

Deno.test("runStrategy() records every evaluation in the store it is given, and a finished run's curve reads back", async () => {
  const store = createMemoryRecordStore();
  const make = () =>
    createStrategy("sa", replay.space, { seed: 5, candidateOf: replay.candidateOf });
  const run = await runStrategy(await make(), replayMeasurer(replay), {
    budget: 40,
    store,
    run: { seed: 5, config: { space: "pnpoly_RTX_3090" } },
  });
  const [row] = await store.runs();
  assert.equal(row.status, "finished");
  assert.equal(row.strategy, "sa");
  assert.equal(row.seed, 5);
  assert.equal((await store.counts(row.id)).measured, 40);
  assert.deepEqual((await runTrace(store, row.id)).best, run.best);
});

Deno.test("runStrategy() resumes a run cut short to the curve of an uninterrupted one", async () => {
  const make = () =>
    createStrategy("bo", replay.space, { seed: 1, candidateOf: replay.candidateOf });
  const whole = await runStrategy(await make(), replayMeasurer(replay), { budget: 50 });
  const store = createMemoryRecordStore();
  let calls = 0;
  const inner = replayMeasurer(replay);
  const failing = {
    name: "failing",
    measure: (...args: Parameters<typeof inner.measure>) => {
      if (++calls === 3) return Promise.reject(new Error("lost"));
      return inner.measure(...args);
    },
  };
  await assert.rejects(runStrategy(await make(), failing, { budget: 50, store }), /lost/);
  const [row] = await store.runs();
  assert.equal(row.status, "running");
  assert.ok((await store.counts(row.id)).measured < 50);
  const resumed = await runStrategy(await make(), replayMeasurer(replay), {
    budget: 50,
    store,
    runId: row.id,
  });
  assert.deepEqual(resumed.best, whole.best);
});
