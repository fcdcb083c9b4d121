import assert from "node:assert/strict";
import type { Measurer } from "../measure/measurer.ts";
import type { Candidate, Strategy } from "./strategy.ts";
import { runStrategy } from "../tuner/run_strategy.ts";
import {
  cutAtLimit,
  onClock,
  recordedSeconds,
  timeBudgeted,
  timeRows,
  tuningClock,
} from "./tuning_time.ts";

Deno.test("a configuration's recorded cost: compile, verification, runtimes (or benchmark), framework", () => {
  assert.equal(recordedSeconds(undefined), 0);
  assert.equal(recordedSeconds({ time: 1 }), 0);
  const t = { compile: 100, verification: 10, benchmark: 50, framework: 5, strategy: 1000 };
  // Runtimes recorded: their sum is the benchmark part; the recorded strategy time is not ours.
  assert.ok(Math.abs(recordedSeconds({ time: 1, times: [1, 2, 3], timing: t }) - 0.121) < 1e-12);
  // A failure without runtimes: what its failure cost.
  assert.ok(Math.abs(recordedSeconds({ time: "RuntimeFailedConfig", timing: t }) - 0.165) < 1e-12);
});

Deno.test("the tuning clock adds recorded costs and, unless left out, the strategy's wall time", () => {
  assert.deepEqual(tuningClock([1, 2], [0.5, 0.75]), [1.5, 3.75]);
  assert.deepEqual(tuningClock([1, 2], [0.5, 0.75], { strategyTime: false }), [1, 3]);
  assert.throws(() => tuningClock([1], []), /costs has 1 evaluations and wall 0/);
  const run = onClock({ best: [3, 2], wall: [0, 0], evals: 2 }, [1, 3]);
  const rows = timeRows(new Map([["s", [run]]]), [0.5, 1, 2.9, 3], 2);
  assert.deepEqual(rows.map((r) => r.mean_fraction), [0, 2 / 3, 2 / 3, 1]);
  assert.deepEqual(rows.map((r) => r.mean_evals), [0, 1, 1, 2]);
});

Deno.test("a time-budgeted run stops once its clock passes the limit; repeats cost nothing", async () => {
  // A strategy that proposes x = 0, 1, 2, ... (and repeats 0 every other time); each costs x + 1 s.
  let next = 0, calls = 0;
  const inner: Strategy = {
    name: "count",
    propose: () => (++calls % 2 === 0 ? [{ knobs: [0] }] : [{ knobs: [next++] }]),
    observe: () => {},
  };
  const measurer: Measurer = {
    name: "fake",
    measure: (batch: readonly Candidate[]) =>
      Promise.resolve(batch.map((c) => ({
        errorKind: "none" as const,
        times: [1e-3 * (c.knobs![0] + 1)],
        buildSeconds: 0,
        runSeconds: 0,
      }))),
  };
  const b = timeBudgeted(inner, measurer, (c) => c.knobs![0] + 1, 5.5, { strategyTime: false });
  const trace = await runStrategy(b.strategy, b.measurer, { budget: 100, batch: 1 });
  // Costs 1, 2, 3 reach 6 > 5.5 at the third distinct evaluation; the repeats of 0 are free.
  assert.equal(trace.evals, 3);
  assert.equal(b.clock(), 6);
  assert.throws(() => timeBudgeted(inner, measurer, () => 1, 0), /limitSeconds must be a positive/);
});

Deno.test("timeBudgeted with minEvaluations runs past the limit; cutAtLimit gives back the time-limited part", async () => {
  let next = 0;
  const inner: Strategy = {
    name: "count",
    propose: () => [{ knobs: [next++] }],
    observe: () => {},
  };
  const measurer: Measurer = {
    name: "fake",
    measure: (batch: readonly Candidate[]) =>
      Promise.resolve(batch.map(() => ({
        errorKind: "none" as const,
        times: [1e-3],
        buildSeconds: 0,
        runSeconds: 0,
      }))),
  };
  const b = timeBudgeted(inner, measurer, () => 1, 2.5, { strategyTime: false, minEvaluations: 6 });
  const trace = await runStrategy(b.strategy, b.measurer, { budget: 100, batch: 1 });
  // The limit alone stops after 3 evaluations (clock 3 >= 2.5); minEvaluations keeps it going to 6.
  assert.equal(trace.evals, 6);
  const clock = tuningClock([1, 1, 1, 1, 1, 1], trace.wall, { strategyTime: false });
  const cut = cutAtLimit(onClock(trace, clock), 2.5);
  assert.equal(cut.evals, 3);
  assert.deepEqual(cut.wall, [1, 2, 3]);
  // A run that ends before the limit comes back whole.
  assert.equal(cutAtLimit(onClock(trace, clock), 100).evals, 6);
});
