/**
 * Misuse of the library from a script gives a TypeError or RangeError that
 * names the option and what it got (issue 40), not `Cannot read properties
 * of undefined` from deep inside, and not silent acceptance.
 */
import assert from "node:assert/strict";
import { tune } from "../tuner/loop.ts";
import { replaySpace } from "../search/replay.ts";
import { defaultSpace } from "../search/sketch.ts";
import { runSession } from "../tuner/session.ts";
import { createRunner } from "../measure/runner.ts";
import { sqliteRecordStore } from "../datasets/record_store.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import { openSpace } from "../tuner/open_space.ts";
import { compareStrategies } from "../tuner/compare_strategies.ts";
import { createWorkload } from "../ir/workloads.ts";
import type { KernelTunerCache } from "../datasets/kerneltuner.ts";
import { checkInteger, checkNumber } from "../ir/check.ts";
import { createStrategy } from "../tuner/strategies.ts";
import { createNativeMeasurer } from "../measure/native.ts";
import { runTable } from "../datasets/tables.ts";
import { bandCurveSVG, tuningCurveSVG } from "../plots/tuning_curve.ts";
import { extractTasks } from "../network/tasks.ts";
import { htmlTable } from "../tuner/jupyter.ts";
import { trialsUsed } from "../tuner/trials_used.ts";
import { templateSpace } from "../search/templates/registry.ts";
import { lower } from "../ir/lower.ts";
import { Schedule } from "../ir/schedule.ts";
import { createPrng } from "../ir/prng.ts";
import { fractionBand } from "../search/comparison.ts";
import { compareFrame, runsFrame } from "../search/comparison_frame.ts";
import { ScheduleEnv } from "../rl/env.ts";
import { agentStrategy } from "../rl/strategy.ts";
import { randomAgent } from "../rl/agent.ts";
import { dqnAgent } from "../rl/dqn.ts";
import { ppoAgent } from "../rl/ppo.ts";
import { runEpisode } from "../rl/train.ts";
import { bestSoFar } from "../plots/tuning_curve.ts";
import { heatmapSVG } from "../plots/heatmap.ts";
import { learningCurveSVG } from "../plots/rl_curve.ts";
import { scatterSVG } from "../plots/scatter.ts";
import { estimateCurve, tuneNetwork } from "../tuner/network_tuning.ts";
import { trainAcrossSpaces } from "../tuner/transfer.ts";
import { displayCode, displayRecord, displayTrace, liveProgress, show } from "../tuner/jupyter.ts";
import { evaluateRanking } from "../costmodel/metrics.ts";
import { knobFeaturizer } from "../costmodel/featurizers.ts";
import { XGBoostRegressor } from "../costmodel/xgboost.ts";
import { generateCuda } from "../ir/codegen_cuda.ts";
import { printTrace, traceOf } from "../ir/trace.ts";
import { builtinNetwork } from "../network/builtin.ts";
import { measureEndToEnd } from "../network/end_to_end.ts";
import { randomWeights } from "../network/weights.ts";
import { RecordsDB } from "../datasets/db.ts";

Deno.test("tune({}) names the strategy it lacks", async () => {
  await assert.rejects(
    () => tune({} as Parameters<typeof tune>[0]),
    (e: Error) =>
      e instanceof TypeError && /^strategy must be a strategy .*got undefined$/.test(e.message),
  );
  const fake = {
    strategy: { name: "s", propose: () => [], observe: () => {} },
    measurer: { name: "m", measure: () => Promise.resolve([]) },
    store: createMemoryRecordStore(),
    runId: 1,
  };
  await assert.rejects(() => tune({ ...fake, trials: -1 }), {
    name: "RangeError",
    message: "trials must be an integer >= 0, got -1",
  });
  await assert.rejects(() => tune({ ...fake, trials: 4, patience: 0 }), {
    name: "RangeError",
    message: "patience must be an integer >= 1, got 0",
  });
  // Infinity is no budget (trainAgent's runs end by episodes); the empty strategy ends the run at once.
  const store = fake.store;
  const runId = await store.startRun({
    strategy: "s",
    seed: 0,
    trials: 0,
    target: "m",
    config: {},
    machine: {},
    compiler: "",
    tunebookVersion: "",
    workloadId: await store.upsertWorkload({ name: "w", shape: [], flops: 0 }),
  });
  await tune({ ...fake, runId, trials: Infinity, patience: Infinity });
  await assert.rejects(() => tune(undefined as unknown as Parameters<typeof tune>[0]), {
    name: "TypeError",
    message: "tune options must be an object, got undefined",
  });
});

Deno.test('replaySpace("nope") says it takes a read cache and points to replaySpaceFromFile', () => {
  assert.throws(
    () => replaySpace("nope" as unknown as KernelTunerCache),
    (e: Error) =>
      e instanceof TypeError && /cache must be a Kernel Tuner cache/.test(e.message) &&
      /replaySpaceFromFile/.test(e.message) && /got "nope"$/.test(e.message),
  );
});

Deno.test("defaultSpace(undefined) names the workload", () => {
  assert.throws(
    () => defaultSpace(undefined as unknown as ReturnType<typeof createWorkload>),
    (e: Error) =>
      e instanceof TypeError && /^workload must be a workload .*got undefined$/.test(e.message),
  );
  const w = createWorkload("matmul", [8, 8, 8]);
  assert.throws(() => defaultSpace(w, { maxVector: 0 }), {
    name: "RangeError",
    message: "maxVector must be an integer >= 1, got 0",
  });
  assert.ok(defaultSpace(w).sketches);
});

Deno.test('runSession({ shape: "64" }) names the unknown option, not the records database', async () => {
  await assert.rejects(
    () => runSession({ shape: "64" } as unknown as Parameters<typeof runSession>[0]),
    (e: Error) => e instanceof TypeError && /unknown option "shape" \(got "64"\)/.test(e.message),
  );
  await assert.rejects(
    () => runSession({ db: ":memory:", workload: { name: "matmul", shape: "64" } } as never),
    { name: "TypeError", message: 'workload.shape must be a list of integers, got "64"' },
  );
  await assert.rejects(() => runSession({ db: ":memory:", trials: 0 } as never), {
    name: "RangeError",
    message: "trials must be an integer between 1 and 10000000, got 0",
  });
});

Deno.test('createRunner({ timeoutSeconds: "x" }) is refused, and so are a bad timing and a misspelling', () => {
  assert.throws(() => createRunner({ timeoutSeconds: "x" as unknown as number }), {
    name: "TypeError",
    message: 'timeoutSeconds must be a number above 0, got "x"',
  });
  assert.throws(() => createRunner({ timing: { repeat: 0 } }), {
    name: "RangeError",
    message: "timing.repeat must be an integer >= 1, got 0",
  });
  assert.throws(
    () => createRunner({ timeout: 3 } as never),
    (e: Error) => e instanceof TypeError && /unknown option "timeout"/.test(e.message),
  );
});

Deno.test("sqliteRecordStore(123) is refused, naming what it got", () => {
  assert.throws(() => sqliteRecordStore(123 as never), {
    name: "TypeError",
    message: "db must be a records database (RecordsDB.open(path)), got 123",
  });
});

Deno.test("openSpace and compareStrategies name a bad argument", async () => {
  await assert.rejects(() => openSpace(42 as unknown as string), TypeError);
  const space = await openSpace("pnpoly_RTX_3090");
  await assert.rejects(
    () => compareStrategies(space, ["sa"], undefined as never),
    /options must be an object with budgets and seeds/,
  );
  await assert.rejects(
    () => compareStrategies(space, ["sa"], { budgets: 5 as never, seeds: 1 }),
    /budgets must be a non-empty array of positive integers, got 5/,
  );
});

Deno.test("the checks tell a wrong kind (TypeError) from a value out of range (RangeError)", () => {
  assert.throws(() => checkInteger("3", "n", { min: 1 }), TypeError);
  assert.throws(() => checkInteger(1.5, "n", { min: 1 }), RangeError);
  assert.equal(checkInteger(undefined, "n", { optional: true }), undefined);
  assert.throws(
    () => checkNumber(0, "t", { min: 0, above: true }),
    /t must be a number above 0, got 0/,
  );
  assert.throws(() => checkNumber(NaN, "t"), RangeError);
  assert.equal(checkNumber(2.5, "t", { min: 0 }), 2.5);
});

Deno.test("the rest of the notebook surface names a missing argument", async () => {
  const cases: [string, () => unknown, RegExp][] = [
    [
      "createStrategy",
      () => createStrategy("sa", undefined as never, { seed: 1 }),
      /^space must be a knob space/,
    ],
    [
      "createNativeMeasurer",
      () => createNativeMeasurer({} as never),
      /^workload must be a workload/,
    ],
    ["runTable", () => runTable(1 as never, 2), /^db must be a records database .*got 1$/],
    [
      "tuningCurveSVG",
      () => tuningCurveSVG(undefined as never),
      /^series must be a list of \{ label, values \}/,
    ],
    [
      "bandCurveSVG",
      () => bandCurveSVG(5 as never),
      /^series must be a list of \{ label, median \}/,
    ],
    ["extractTasks", () => extractTasks(undefined as never), /^net must be a network/],
    [
      "htmlTable",
      () => htmlTable(5 as never),
      /^source must be a list of rows or an arquero table, got 5$/,
    ],
    ["trialsUsed", () => trialsUsed(undefined as never, 0.95), /^curves must be an object/],
    ["printTrace", () => printTrace(undefined as never), /^trace must be a trace/],
  ];
  for (const [name, f, message] of cases) {
    await assert.rejects(async () => await f(), (e: Error) => {
      assert.ok(e instanceof TypeError, `${name}: ${e}`);
      assert.match(e.message, message, name);
      return true;
    });
  }
});

Deno.test("templateSpace, lower, new Schedule and fractionBand name a missing argument", async () => {
  const w = createWorkload("matmul", [8, 8, 8]);
  const cases: [string, () => unknown, RegExp][] = [
    ["templateSpace", () => templateSpace(undefined as never, w), /^name must be a template name/],
    [
      "templateSpace workload",
      () => templateSpace("matmul", undefined as never),
      /^workload must be a workload .*got undefined$/,
    ],
    [
      "templateSpace target",
      () => templateSpace("matmul", w, 5 as never),
      /^target must be a register file .*got 5$/,
    ],
    [
      "templateSpace target.lanes",
      () => templateSpace("matmul", w, { registers: 16 } as never),
      /^target\.lanes must be an integer >= 1, got undefined$/,
    ],
    ["lower", () => lower(undefined as never), /^sch must be a schedule .*got undefined$/],
    ["lower({})", () => lower({} as never), /^sch must be a schedule .*got \{\}$/],
    ["new Schedule", () => new Schedule(undefined as never, undefined as never), /^workload must/],
    [
      "new Schedule(w)",
      () => new Schedule(w, undefined as never),
      /^Schedule options must be an object, got undefined$/,
    ],
    [
      "new Schedule(w, {})",
      () => new Schedule(w, {} as never),
      /^prng must be a generator \(createPrng\(seed\)\), got undefined$/,
    ],
    ["fractionBand", () => fractionBand(undefined as never, 1, [1]), /^runs must be a list/],
    [
      "fractionBand runs[0]",
      () => fractionBand([{}] as never, 1, [1]),
      /^runs\[0\] must be a \{ best, wall, evals \} run, got \{\}$/,
    ],
    [
      "fractionBand budgets",
      () => fractionBand([], 1, undefined as never),
      /^budgets must be a list of evaluation counts, got undefined$/,
    ],
  ];
  for (const [name, f, message] of cases) {
    await assert.rejects(async () => await f(), (e: Error) => {
      assert.ok(e instanceof TypeError, `${name}: ${e}`);
      assert.match(e.message, message, name);
      return true;
    });
  }
  assert.throws(() => fractionBand([], "1" as never, [1]), {
    name: "TypeError",
    message: 'optimum must be a number >= 0, got "1"',
  });
  assert.throws(() => fractionBand([], 1, [1.5]), {
    name: "RangeError",
    message: "budgets[0] must be an integer >= 0, got 1.5",
  });
  // Good arguments still work.
  assert.deepEqual(fractionBand([{ best: [2, 1], wall: [0, 0], evals: 2 }], 1, [2]).median, [1]);
  const sch = new Schedule(w, { prng: createPrng(0) });
  assert.ok(lower(sch));
  assert.ok(templateSpace("matmul", w).space);
});

Deno.test("the other root exports name a missing or wrong-kind argument", async () => {
  const w = createWorkload("matmul", [8, 8, 8]);
  const space = templateSpace("matmul", w).space;
  const net = builtinNetwork("squeezenet1_1", { size: 32 });
  const env = new ScheduleEnv(space, () => Promise.resolve({ seconds: 1 }) as never);
  const cases: [string, () => unknown, RegExp][] = [
    ["ScheduleEnv", () => new ScheduleEnv(undefined as never, () => 0 as never), /^space must/],
    ["ScheduleEnv evaluate", () => new ScheduleEnv(space, 5 as never), /^evaluate must be a f/],
    ["agentStrategy", () => agentStrategy(undefined as never, {} as never), /^space must be a k/],
    [
      "agentStrategy options",
      () => agentStrategy(space, undefined as never),
      /^agentStrategy options must be an object, got undefined$/,
    ],
    [
      "agentStrategy makeAgent",
      () => agentStrategy(space, { seed: 1, name: "x" } as never),
      /^makeAgent must be a function, got undefined$/,
    ],
    ["bestSoFar", () => bestSoFar(5 as never), /^values must be a list of numbers, got 5$/],
    ["compareFrame", () => compareFrame(undefined as never, [1], 1), /^runs must be a Map/],
    ["runsFrame", () => runsFrame("x" as never, 1), /^runs must be a Map .*got "x"$/],
    ["dqnAgent", () => dqnAgent(undefined as never), /^spec must be an agent spec/],
    ["ppoAgent", () => ppoAgent(5 as never), /^spec must be an agent spec .*got 5$/],
    ["randomAgent", () => randomAgent({} as never), /^spec must be an agent spec .*got \{\}$/],
    ["estimateCurve", () => estimateCurve(undefined as never), /^outcome must be what tuneNetw/],
    ["evaluateRanking", () => evaluateRanking(5 as never, []), /^pred must be a list of pre/],
    ["generateCuda", () => generateCuda(undefined as never), /^kernel must be a kernel \(lower/],
    ["heatmapSVG", () => heatmapSVG(undefined as never, [], { x: "a", y: "b" }), /^space must/],
    [
      "heatmapSVG options",
      () => heatmapSVG(space, [], undefined as never),
      /^heatmap options must be an object, got undefined$/,
    ],
    ["knobFeaturizer", () => knobFeaturizer(5 as never), /^space must be a knob space .*got 5$/],
    ["learningCurveSVG", () => learningCurveSVG(undefined as never), /^series must be a list/],
    [
      "learningCurveSVG series[0]",
      () => learningCurveSVG([{ label: "a" }] as never),
      /^series\[0\] must be \{ label, episodes \}/,
    ],
    ["measureEndToEnd", () => measureEndToEnd(undefined as never, new Map()), /^net must be a n/],
    [
      "measureEndToEnd weights",
      () => measureEndToEnd(net, undefined as never),
      /^weights must be a Map of weights/,
    ],
    ["randomWeights", () => randomWeights(5 as never, 1), /^net must be a network .*got 5$/],
    ["runEpisode", () => runEpisode(undefined as never, {} as never), /^env must be a ScheduleE/],
    ["runEpisode agent", () => runEpisode(env, undefined as never), /^agent must be an agent/],
    ["scatterSVG", () => scatterSVG(undefined as never, {} as never), /^points must be a list/],
    ["scatterSVG options", () => scatterSVG([], undefined as never), /^scatterSVG options must/],
    ["show", () => show({} as never), /^x must be a display .*got \{\}$/],
    ["traceOf", () => traceOf(undefined as never), /^sch must be a schedule .*got undefined$/],
    [
      "trainAcrossSpaces",
      () => trainAcrossSpaces(undefined as never, () => ({}) as never, { episodes: 1 }),
      /^layers must be a list of layers/,
    ],
    [
      "trainAcrossSpaces options",
      () => trainAcrossSpaces([], () => ({}) as never, undefined as never),
      /^trainAcrossSpaces options must be an object, got undefined$/,
    ],
    ["tuneNetwork", () => tuneNetwork(undefined as never), /^tuneNetwork options must be an ob/],
    [
      "tuneNetwork tasks",
      () => tuneNetwork({ db: ":memory:", trials: 4, strategy: "random" } as never),
      /^tasks must be a list of tasks \(extractTasks\(net\)\), got undefined$/,
    ],
    ["displayCode", () => displayCode(5 as never), /^code must be a string, got 5$/],
    ["displayRecord", () => displayRecord(undefined as never), /^record must be a candidate/],
    ["displayTrace", () => displayTrace(5 as never), /^trace must be a trace or its JSON text/],
    ["liveProgress", () => liveProgress(5 as never), /^title must be a string, got 5$/],
    ["RecordsDB.open", () => RecordsDB.open(5 as never), /^path must be a records database pa/],
    ["XGBoostRegressor", () => new XGBoostRegressor(5 as never), /^XGBoost options must be an/],
    ["XGBoostRegressor.load", () => XGBoostRegressor.load(undefined as never), /^path must be a/],
  ];
  for (const [name, f, message] of cases) {
    await assert.rejects(async () => await f(), (e: Error) => {
      assert.ok(e instanceof TypeError, `${name}: ${e}`);
      assert.match(e.message, message, name);
      return true;
    });
  }
  // Right kind, out of range: a RangeError.
  assert.throws(() => evaluateRanking([1, 2], [1]), {
    name: "RangeError",
    message: "pred and truth must have one value per candidate, got 2 and 1",
  });
  assert.throws(() => new XGBoostRegressor({ eta: "fast" as never }), {
    name: "TypeError",
    message: 'eta must be a number, got "fast"',
  });
  await assert.rejects(
    () => tuneNetwork({ tasks: [], db: ":memory:", trials: 0, strategy: "random" }),
    { name: "RangeError", message: "trials must be an integer >= 1, got 0" },
  );
  // Good arguments still work.
  assert.deepEqual(bestSoFar([1, 3, 2]), [1, 3, 3]);
  assert.equal(evaluateRanking([1, 2], [1, 2]).pick_regret, 0);
  assert.equal(randomWeights(net, 1).size > 0, true);
});
