import assert from "node:assert/strict";
import { RecordsDB } from "../datasets/db.ts";
import { runScript } from "../tests/_cli.ts";
import {
  oracleTrials,
  type RecordedTask,
  recordedTasks,
  replaySchedule,
  shuffleFirstPlans,
} from "./scheduler_replay.ts";

Deno.test("recordedTasks reads one task per run: weight, flops and trial times in order", () => {
  const db = RecordsDB.open(":memory:", { mode: "create" });
  for (const [weight, times] of [[3, [2e-3, 1e-3]], [1, [5e-3]]] as const) {
    const workloadId = db.upsertWorkload({ name: "conv2d", shape: [weight], flops: 1e6 * weight });
    const run = db.startRun({
      strategy: "xgb",
      seed: 1,
      trials: 2,
      target: "cpu",
      workloadId,
      config: { network: { task: 0, weight } },
      machine: {},
      compiler: "",
      tunebookVersion: "0",
    });
    times.forEach((t, trial) => {
      const c = db.addCandidate(run, { trial, trace: "null", traceHash: `${trial}` });
      db.addResult(c, { errorKind: "none", times: [t], buildSeconds: 0, runSeconds: 0 });
    });
    const failed = db.addCandidate(run, { trial: times.length, trace: "null", traceHash: "x" });
    db.addResult(failed, { errorKind: "runtime_error", times: [], buildSeconds: 0, runSeconds: 0 });
  }
  const tasks = recordedTasks(db);
  db.close();
  assert.deepEqual(tasks.map((t) => [t.weight, t.flops, t.group]), [
    [3, 3e6, "conv2d"],
    [1, 1e6, "conv2d"],
  ]);
  assert.deepEqual(tasks[0].seconds, [2e-3, 1e-3, Infinity]);
  assert.deepEqual(tasks[1].seconds, [5e-3, Infinity]);
});

const task = (weight: number, seconds: number[]): RecordedTask => ({ weight, flops: 1e6, seconds });

Deno.test("replaySchedule hands out each task's recorded trials in order, round by round", async () => {
  const tasks = [task(1, [4e-3, 3e-3, 2e-3]), task(1, [1e-3, 1e-3, 1e-3])];
  // Round robin, rounds of 1: task 0, task 1, task 0, task 1.
  assert.deepEqual(
    await replaySchedule(tasks, { scheduler: "round-robin", perRound: 1 }, 4),
    [NaN, 5, 4, 4],
  );
  // After the warm-up the gradient scheduler gives both rounds to task 0, the slow one.
  const g = await replaySchedule(tasks, { scheduler: "gradient", perRound: 1 }, 4);
  assert.deepEqual(g, [NaN, 5, 4, 3]);
});

Deno.test("oracleTrials is the fewest trials whose best allocation reaches the target", () => {
  const tasks = [task(1, [8e-3, 8e-3, 2e-3, 2e-3]), task(1, [4e-3, 1e-3, 1e-3, 1e-3])];
  // Every task gets a round: 12 ms after 2 trials; task 1's second trial gives 9 ms; task 0 needs 3.
  assert.equal(oracleTrials(tasks, 1, 12, 8), 2);
  assert.equal(oracleTrials(tasks, 1, 9, 8), 3);
  assert.equal(oracleTrials(tasks, 1, 3, 8), 5);
  assert.equal(oracleTrials(tasks, 2, 3, 8), 6);
  assert.equal(oracleTrials(tasks, 1, 2.9, 8), undefined);
});

Deno.test("shuffleFirstPlans permutes only the first plan of each task, the same for a seed", () => {
  const tasks = [task(1, [1, 2, 3, 4, 5, 6]), task(1, [7, 8, 9])];
  const a = shuffleFirstPlans(tasks, 4, 7), b = shuffleFirstPlans(tasks, 4, 7);
  assert.deepEqual(a, b);
  assert.deepEqual([...a[0].seconds.slice(0, 4)].sort(), [1, 2, 3, 4]);
  assert.deepEqual(a[0].seconds.slice(4), [5, 6]);
  assert.deepEqual([...a[1].seconds].sort(), [7, 8, 9]);
  assert.deepEqual(tasks[0].seconds, [1, 2, 3, 4, 5, 6]);
});

Deno.test("bench/scheduler_replay.ts: bad input exits 2 with one line naming the flag or file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-replay-" });
  try {
    for (
      const [args, said] of [
        [[], /Missing --db/],
        [["--db", "none.db"], /none\.db/],
        [["--db", "none.db", "--per-round", "0"], /--per-round/],
      ] as const
    ) {
      const r = await runScript("bench/scheduler_replay.ts", [...args], dir);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.match(r.stderr, said);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
