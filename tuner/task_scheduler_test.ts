import assert from "node:assert/strict";
import { RecordsDB } from "../datasets/db.ts";
import { matmul } from "../ir/workloads.ts";
import {
  type SchedulerTask,
  scheduleTasks,
  taskGradients,
  type TaskRoundResult,
  warmStart,
} from "./task_scheduler.ts";

/**
 * Fake tasks: task i's best latency after r rounds is `curves[i](r)`; each
 * round measures the trials it is given.
 */
function fakeTuner(curves: ((round: number) => number)[]) {
  const rounds = curves.map(() => 0);
  const calls: number[] = [];
  return {
    calls,
    tuneTask(i: number, n: number): Promise<TaskRoundResult> {
      calls.push(i);
      return Promise.resolve({
        measured: n,
        bestSeconds: curves[i](++rounds[i]),
        exhausted: false,
      });
    },
  };
}

const flat = (s: number) => () => s;

Deno.test("round robin gives the tasks rounds in turn", async () => {
  const f = fakeTuner([flat(1e-3), flat(2e-3), flat(3e-3)]);
  const tasks = [1, 1, 1].map((weight) => ({ weight, flops: 1e9 }));
  const r = await scheduleTasks({
    tasks,
    trials: 28,
    perRound: 4,
    scheduler: "round-robin",
    tuneTask: f.tuneTask,
  });
  assert.deepEqual(f.calls, [0, 1, 2, 0, 1, 2, 0]);
  assert.deepEqual(r.trialsPerTask, [12, 8, 8]);
  assert.equal(r.objective, 6e-3);
});

Deno.test("the gradient scheduler gives rounds to the task whose rounds cut the objective most", async () => {
  // Task 0 is slow and improves as 1/rounds; task 1 is fast and has converged.
  const slow = (r: number) => 16e-3 / r;
  const f = fakeTuner([slow, flat(1e-3)]);
  const tasks = [{ weight: 1, flops: 1e9 }, { weight: 1, flops: 1e9 }];
  const r = await scheduleTasks({
    tasks,
    trials: 40,
    perRound: 4,
    scheduler: "gradient",
    tuneTask: f.tuneTask,
  });
  assert.deepEqual(f.calls.slice(0, 2), [0, 1], "warm-up: one round each");
  assert.ok(r.trialsPerTask[0] >= 2 * r.trialsPerTask[1], `trials per task ${r.trialsPerTask}`);
  // Round robin on the same budget ends with a larger objective.
  const rr = await scheduleTasks({
    tasks,
    trials: 40,
    perRound: 4,
    scheduler: "round-robin",
    tuneTask: fakeTuner([slow, flat(1e-3)]).tuneTask,
  });
  assert.ok(r.objective < rr.objective, `${r.objective} vs ${rr.objective}`);
});

Deno.test("the gradient scheduler favours the task of larger weight when curves are equal", async () => {
  const curve = (r: number) => 1e-3 / r;
  const f = fakeTuner([curve, curve]);
  const r = await scheduleTasks({
    tasks: [{ weight: 1, flops: 1e9 }, { weight: 9, flops: 1e9 }],
    trials: 60,
    perRound: 4,
    scheduler: "gradient",
    tuneTask: f.tuneTask,
  });
  assert.ok(r.trialsPerTask[1] > 2 * r.trialsPerTask[0], `${r.trialsPerTask}`);
});

Deno.test("taskGradients: beta bounds a task by the throughput of its similar tasks", () => {
  const tasks: SchedulerTask[] = [
    { weight: 1, flops: 1e9, group: "conv2d" },
    { weight: 1, flops: 1e9, group: "conv2d" },
  ];
  // Task 0 reaches 1000 GFLOP/s, task 1 only 10: beta 2 says task 1 could drop to 2 ms.
  const state = { tasks, rounds: [10, 10], history: [[1e-3], [0.1]], best: [1e-3, 0.1] };
  const [, g1] = taskGradients(state, { alpha: 0.2, beta: 2 });
  assert.ok(Math.abs(g1 - 0.8 * (2e-3 - 0.1)) < 1e-12, `${g1}`);
  // Without the group only g/t is expected: 0.8 * -0.01.
  const [, alone] = taskGradients({
    ...state,
    tasks: tasks.map((t) => ({ ...t, group: undefined })),
  });
  assert.ok(Math.abs(alone - 0.8 * -0.01) < 1e-12, `${alone}`);
});

Deno.test("taskGradients: the backward window adds the recent slope", () => {
  const tasks = [{ weight: 2, flops: 1e9 }];
  const [g] = taskGradients({ tasks, rounds: [4], history: [[8, 4, 2, 1]], best: [1] }, {
    alpha: 0.2,
    backwardWindow: 3,
  });
  // 2 * (0.2 * (1 - 8) / 3 + 0.8 * (1 - 1/4 - 1))
  assert.ok(Math.abs(g - 2 * (0.2 * -7 / 3 + 0.8 * -0.25)) < 1e-12, `${g}`);
});

Deno.test("a task that measures nothing new is dead and gets no more rounds", async () => {
  const calls: number[] = [];
  const r = await scheduleTasks({
    tasks: [{ weight: 1, flops: 1e9 }, { weight: 1, flops: 1e9 }],
    trials: 20,
    perRound: 2,
    scheduler: "round-robin",
    tuneTask: (i, n) => {
      calls.push(i);
      return Promise.resolve(
        i === 0
          ? { measured: 0, exhausted: true }
          : { measured: n, bestSeconds: 1, exhausted: false },
      );
    },
  });
  assert.equal(calls.filter((i) => i === 0).length, 1);
  assert.deepEqual(r.trialsPerTask, [0, 20]);
  assert.ok(Number.isNaN(r.objective), "task 0 never had a latency");
});

Deno.test("warm start reads the best latency and trial count of every run of a workload", () => {
  const db = RecordsDB.open(":memory:", { mode: "create" });
  try {
    const w = matmul(8, 8, 8), other = matmul(4, 4, 4);
    const run = (workload = w, target = "cpu") =>
      db.startRun({
        strategy: "random",
        seed: 1,
        trials: 4,
        target,
        workloadId: db.upsertWorkload({ name: workload.name, shape: workload.shape, flops: 1024 }),
        config: {},
        machine: {},
        compiler: "gcc",
        tunebookVersion: "test",
      });
    const add = (runId: number, trial: number, seconds: number | null) => {
      const c = db.addCandidate(runId, {
        trial,
        trace: `{"t":${runId * 100 + trial}}`,
        traceHash: `h${runId}-${trial}`,
      });
      db.addResult(c, {
        errorKind: seconds === null ? "runtime_error" : "none",
        times: seconds === null ? [] : [seconds],
        buildSeconds: 0,
        runSeconds: 0,
      });
    };
    const a = run(), b = run(), c = run(other), d = run(w, "cuda");
    add(a, 0, 3e-6);
    add(a, 1, null);
    add(b, 0, 2e-6);
    add(c, 0, 1e-7);
    add(d, 0, 1e-8);
    const [s, t] = warmStart(db, [w, matmul(16, 16, 16)]);
    assert.equal(s.trials, 3);
    assert.equal(s.bestSeconds, 2e-6);
    assert.equal(s.bestTrace, `{"t":${b * 100}}`);
    assert.deepEqual(t, { trials: 0 });
  } finally {
    db.close();
  }
});

Deno.test("warm-started tasks skip the gradient scheduler's warm-up round", async () => {
  const f = fakeTuner([flat(1e-3), flat(1e-3), flat(1e-3)]);
  await scheduleTasks({
    tasks: [1, 1, 1].map((weight) => ({ weight, flops: 1e9 })),
    trials: 4,
    perRound: 2,
    scheduler: "gradient",
    warm: [{ trials: 8, bestSeconds: 1e-3 }, undefined, { trials: 0 }],
    tuneTask: f.tuneTask,
  });
  assert.deepEqual(f.calls, [1, 2]);
});

Deno.test("taskGradients: a stalled task loses the similar-task bound unless Ansor's rule is asked for", () => {
  const tasks = [
    { weight: 1, flops: 1e9, group: "conv" },
    { weight: 1, flops: 1e9, group: "conv" },
  ];
  // Task 1 is 100x slower than task 0 and has not improved in its last 3 rounds.
  const state = {
    tasks,
    rounds: [4, 4],
    history: [[1e-3], [0.1, 0.1, 0.1, 0.1]],
    best: [1e-3, 0.1],
  };
  const [, ansor] = taskGradients(state, { dropBoundWhenStalled: false });
  const [, dropped] = taskGradients(state);
  // Ansor: 0.8 * (2 * 1e-3 - 0.1); without the bound: 0.8 * (-0.1 / 4).
  assert.ok(Math.abs(ansor - 0.8 * (2e-3 - 0.1)) < 1e-12, `${ansor}`);
  assert.ok(Math.abs(dropped - 0.8 * (-0.1 / 4)) < 1e-12, `${dropped}`);
  // Still improving: the bound holds with either rule.
  const improving = { ...state, history: [[1e-3], [0.4, 0.3, 0.2, 0.1]] };
  const [, a] = taskGradients(improving, { dropBoundWhenStalled: false });
  const [, b] = taskGradients(improving);
  assert.equal(a, b);
});

Deno.test("taskGradients: paceStalled caps a stalled task's forward estimate at its average gain per round", () => {
  const tasks = [{ weight: 4, flops: 1e9 }, { weight: 1, flops: 1e8 }];
  // Task 0 (weight 4) went from 0.55 to 0.46 ms in its first 7 rounds and has not moved in the
  // last 3 of its 10; task 1 has had one round, at 0.15 ms.
  const h0 = [0.55, 0.52, 0.5, 0.48, 0.47, 0.465, 0.46, 0.46, 0.46, 0.46].map((x) => x * 1e-3);
  const state = { tasks, rounds: [10, 1], history: [h0, [0.15e-3]], best: [0.46e-3, 0.15e-3] };
  const [heavy, light] = taskGradients(state);
  // Ansor's forward estimate for task 0: 4 * 0.8 * (-0.46 / 10) ms, more than the light task's gain.
  assert.ok(Math.abs(heavy - 4 * 0.8 * -0.046e-3) < 1e-12, `${heavy}`);
  assert.ok(heavy < light);
  const [paced, same] = taskGradients(state, { paceStalled: true });
  // Paced: 4 * 0.8 * -(0.55 - 0.46) / 9 ms = -0.032 ms; the light task now goes first.
  assert.ok(Math.abs(paced - 4 * 0.8 * -(0.09e-3 / 9)) < 1e-12, `${paced}`);
  assert.equal(same, light);
  assert.ok(light < paced);
  // A task still improving keeps Ansor's estimate.
  const improving = { ...state, history: [h0.map((x, i) => x - i * 1e-6), [0.15e-3]] };
  assert.equal(
    taskGradients(improving, { paceStalled: true })[0],
    taskGradients(improving)[0],
  );
});
