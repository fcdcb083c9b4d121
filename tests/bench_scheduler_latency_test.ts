/**
 * bench/scheduler_latency.ts: the sessions of a tune-network database, a
 * session's kernels at a checkpoint, and the command on a two-layer network
 * tuned by both schedulers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import { checkpoints, recordedSessions } from "../bench/scheduler_latency.ts";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";

/** Adds a run of network task `task` with the given trial times (null: a failure); returns its id. */
function addRun(
  db: RecordsDB,
  o: {
    task: number;
    scheduler: string;
    shape: number;
    times: (number | null)[];
    strategy?: string;
  },
): number {
  const workloadId = db.upsertWorkload({ name: "conv2d", shape: [1, o.shape], flops: 1e6 });
  const run = db.startRun({
    strategy: o.strategy ?? "xgb",
    seed: 1,
    trials: o.times.length,
    target: "cpu",
    workloadId,
    config: { network: { task: o.task, weight: 1, scheduler: o.scheduler } },
    machine: {},
    compiler: "",
    tunebookVersion: "0",
  });
  o.times.forEach((t, trial) => {
    const trace = JSON.stringify({ id: `${o.scheduler}-${o.shape}-${trial}` });
    const c = db.addCandidate(run, { trial, trace, traceHash: `${run}-${trial}` });
    db.addResult(c, {
      errorKind: t === null ? "runtime_error" : "none",
      times: t === null ? [] : [t],
      buildSeconds: 0,
      runSeconds: 0,
    });
  });
  return run;
}

Deno.test("recordedSessions groups a database's runs into tune-network sessions, one run per task each", () => {
  const db = RecordsDB.open(":memory:", { mode: "create" });
  try {
    const g1 = addRun(db, { task: 1, scheduler: "gradient", shape: 2, times: [1e-3] });
    const g0 = addRun(db, { task: 0, scheduler: "gradient", shape: 1, times: [2e-3, 1e-3] });
    const r0 = addRun(db, { task: 0, scheduler: "round-robin", shape: 1, times: [3e-3] });
    addRun(db, {
      task: 0,
      scheduler: "round-robin",
      shape: 1,
      times: [1e-3],
      strategy: "finalists",
    });
    const r1 = addRun(db, { task: 1, scheduler: "round-robin", shape: 2, times: [3e-3, null] });
    // Task 1 again: a second gradient session.
    const g2 = addRun(db, { task: 1, scheduler: "gradient", shape: 2, times: [5e-3] });
    assert.deepEqual(recordedSessions(db), [
      { scheduler: "gradient", strategy: "xgb", runIds: [g1, g0], trials: 3 },
      { scheduler: "round-robin", strategy: "xgb", runIds: [r0, r1], trials: 3 },
      { scheduler: "gradient", strategy: "xgb", runIds: [g2], trials: 1 },
    ]);
  } finally {
    db.close();
  }
});

Deno.test("checkpoints take each task's best among a session's first trials, in the order measured", () => {
  const db = RecordsDB.open(":memory:", { mode: "create" });
  try {
    // Recorded before the session: task shape 3's only record.
    addRun(db, { task: 0, scheduler: "round-robin", shape: 3, times: [7e-3] });
    const a = addRun(db, { task: 0, scheduler: "gradient", shape: 1, times: [4e-3, 2e-3] });
    const b = addRun(db, { task: 1, scheduler: "gradient", shape: 2, times: [null, 3e-3, 1e-3] });
    const session = recordedSessions(db).find((s) => s.scheduler === "gradient")!;
    assert.deepEqual(session.runIds, [a, b]);
    // Candidates in the order recorded: a's two, then b's three.
    const [one, three, five, c] = checkpoints(db, session, [1, 3, 5, 4]);
    const at = (k: typeof one) => Object.fromEntries(k.seconds);
    assert.deepEqual(at(one), { "conv2d(1,1)": 4e-3, "conv2d(1,3)": 7e-3 });
    assert.deepEqual(at(three), { "conv2d(1,1)": 2e-3, "conv2d(1,3)": 7e-3 });
    assert.deepEqual(at(five), { "conv2d(1,1)": 2e-3, "conv2d(1,2)": 1e-3, "conv2d(1,3)": 7e-3 });
    assert.equal(c.trials, 4);
    assert.equal(c.seconds.get("conv2d(1,2)"), 3e-3);
    assert.equal(c.traces.get("conv2d(1,2)"), '{"id":"gradient-2-1"}');
  } finally {
    db.close();
  }
});

Deno.test("bench/scheduler_latency.ts times both schedulers' kernels at their checkpoints in one run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-scheduler-latency-" });
  try {
    await Deno.writeTextFile(
      join(dir, "two.json"),
      JSON.stringify({
        name: "two",
        input: { name: "x", shape: [1, 8, 8, 8] },
        layers: [
          { name: "c", op: "conv2d", inputs: ["x"], channels: 8, kernel: 3, pad: 1 },
          { name: "r", op: "relu", inputs: ["c"] },
          { name: "d", op: "conv2d", inputs: ["r"], channels: 8, kernel: 1 },
        ],
      }),
    );
    const none = await runScript("bench/scheduler_latency.ts", ["--db", "n.db"], dir);
    assert.equal(none.code, 2);
    assert.equal(none.stderr.trim().split("\n").length, 1, none.stderr);
    const tuned = await runScript(
      "cli/tune_network.ts",
      [
        "--network",
        "two.json",
        "--trials",
        "8",
        "--per-round",
        "2",
        "--scheduler",
        "gradient,round-robin",
        "--db",
        "n.db",
        "--no-execute",
        "--finalists",
        "0",
      ],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assert.equal(tuned.code, 0, tuned.stderr);
    const r = await runScript("bench/scheduler_latency.ts", [
      "--db",
      "n.db",
      "--network",
      "two.json",
      "--rounds",
      "2",
      "--repeat",
      "1",
      "--kernel-rounds",
      "2",
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    assert.equal(j.reference, "round-robin at 8");
    assert.deepEqual(
      j.checkpoints.map((c: { kernels: string }) => c.kernels),
      ["round-robin at 4", "round-robin at 8", "gradient at 4", "gradient at 8"],
    );
    for (const c of j.checkpoints) {
      assert.equal(c.matchesReference, true);
      assert.ok(c.latencyMs > 0 && c.estimateMs > 0 && c.retimedEstimateMs > 0, JSON.stringify(c));
      assert.ok(c.overReference.min <= c.overReference.median, JSON.stringify(c));
    }
    // Each task's kernels re-timed, set by set; the estimate re-timed is their weighted sum.
    assert.equal(j.tasks.length, 2);
    for (const t of j.tasks) assert.equal(t.retimedMs.length, 4);
    const sum = j.tasks.reduce((a: number, t: { retimedMs: number[] }) => a + t.retimedMs[1], 0);
    assert.ok(Math.abs(sum - j.checkpoints[1].retimedEstimateMs) < 1e-3, `${sum}`);
    // The reference against itself, round by round.
    assert.deepEqual(j.checkpoints[1].overReference, { median: 1, min: 1, max: 1 });
    const bad = await runScript("bench/scheduler_latency.ts", ["--db", "n.db", "--at", "2"], dir);
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr.trim(), 'scheduler_latency: --at takes fractions in (0, 1], got "2"');
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
