import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { RecordsDB } from "../datasets/db.ts";
import type { Trace } from "../ir/trace.ts";
import { kernelSource } from "../measure/kernel_source.ts";
import { DEFAULTS } from "../ir/defaults.ts";
import type { Measurer } from "../measure/measurer.ts";
import type { TimingOptions } from "../measure/types.ts";
import {
  type MeasurerConfig,
  NothingToResumeError,
  type RemoteMeasurement,
  ResumeConflictError,
  runSession,
  type SessionOptions,
} from "./session.ts";

const SMALL: SessionOptions = {
  db: "",
  workload: { name: "matmul", shape: [12, 10, 8] },
  strategy: "random",
  seed: 3,
  trials: 6,
  batch: 3,
  timeoutSeconds: 5,
  timing: { number: 1, repeat: 1, minRepeatMs: 0 },
  cacheDir: join(Deno.cwd(), ".cache", "kernels"),
};

Deno.test("a candidate whose lowering throws is recorded as instantiation_error and the run finishes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let n = 0;
    const source = (trace: Trace) => {
      if (n++ === 1) throw new RangeError("Maximum call stack size exceeded");
      return kernelSource(trace);
    };
    const s = await runSession({ ...SMALL, db: join(dir, "r.db"), source });
    assert.equal(s.valid + s.errors, 6);
    const db = RecordsDB.open(join(dir, "r.db"), { mode: "read" });
    const failed = db.candidates(s.run_id).filter((c) => c.result?.errorKind !== "none");
    assert.equal(failed.length, 1);
    assert.equal(failed[0].result?.errorKind, "instantiation_error");
    assert.match(failed[0].result?.error ?? "", /RangeError: Maximum call stack size exceeded/);
    assert.equal(db.run(s.run_id)?.status, "finished");
    db.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an aborted session stops after its round, stays unfinished, and resumes by run id", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "r.db");
    const stop = new AbortController();
    const first = await runSession({
      ...SMALL,
      db: path,
      unity: 2,
      signal: stop.signal,
      onProgress: () => stop.abort(),
    });
    assert.equal(first.interrupted, true);
    assert.ok(first.valid + first.errors < 6, `${first.valid + first.errors} measured`);
    // A second, finished run: resuming by id still picks the first.
    const other = await runSession({ ...SMALL, db: path, trials: 1 });
    let db = RecordsDB.open(path, { mode: "read" });
    assert.equal(db.run(first.run_id)?.status, "running");
    assert.equal(db.run(first.run_id)?.config.unity, 2, "--unity is stored");
    db.close();
    await assert.rejects(
      runSession({ db: path, resume: true, runId: other.run_id }),
      (e: unknown) => e instanceof ResumeConflictError && /is finished/.test(e.message),
    );
    await assert.rejects(
      runSession({ db: path, resume: true, runId: first.run_id, trials: 7 }),
      (e: unknown) =>
        e instanceof ResumeConflictError &&
        e.message.startsWith("--trials 7 contradicts run 1, which was started with --trials 6"),
    );
    const resumed = await runSession({ db: path, resume: true, runId: first.run_id, seed: 3 });
    assert.equal(resumed.run_id, first.run_id);
    assert.equal(resumed.valid + resumed.errors, 6);
    db = RecordsDB.open(path, { mode: "read" });
    assert.equal(db.run(first.run_id)?.status, "finished");
    db.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Marks the results of these trials of a run `worker_lost`, as a worker killed from outside would leave them. */
function markLost(path: string, runId: number, trials: number[]): void {
  const db = new DatabaseSync(path);
  try {
    for (const trial of trials) {
      db.prepare(
        `UPDATE results SET error_kind = 'worker_lost', error = 'killed from outside',
           times = '[]', seconds = NULL, gflops = NULL
         WHERE candidate_id = (SELECT id FROM candidates WHERE run_id = ? AND trial = ?)`,
      ).run(runId, trial);
    }
  } finally {
    db.close();
  }
}

/** Result id and error kind of each candidate of a run, by trial. */
function resultsOf(path: string, runId: number): { trial: number; kind?: string; id?: number }[] {
  const db = RecordsDB.open(path, { mode: "read" });
  try {
    return db.candidates(runId).map((c) => ({
      trial: c.trial,
      kind: c.result?.errorKind,
      id: c.result?.id,
    }));
  } finally {
    db.close();
  }
}

Deno.test("resuming a finished run measures again exactly its transient results, then finishes it again", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "r.db");
    const first = await runSession({ ...SMALL, db: path });
    const second = await runSession({ ...SMALL, db: path, seed: 4, trials: 3 });
    await assert.rejects(
      runSession({ db: path, resume: true, runId: first.run_id }),
      (e: unknown) => e instanceof ResumeConflictError && /no transient result/.test(e.message),
    );
    await assert.rejects(
      runSession({ db: path, resume: true }),
      (e: unknown) => e instanceof NothingToResumeError,
    );
    markLost(path, first.run_id, [1, 4]);
    const before = resultsOf(path, first.run_id);
    assert.deepEqual(before.filter((r) => r.kind === "worker_lost").map((r) => r.trial), [1, 4]);
    const measured: number[] = [];
    const resumed = await runSession({
      db: path,
      resume: true,
      runId: first.run_id,
      onProgress: (p) => measured.push(p.done),
    });
    assert.equal(resumed.run_id, first.run_id);
    assert.deepEqual(measured, [1, 2], "two candidates measured, no more");
    const after = resultsOf(path, first.run_id);
    assert.equal(after.length, 6, "no new candidate");
    for (const [i, r] of after.entries()) {
      assert.notEqual(r.kind, "worker_lost", `trial ${r.trial} measured again`);
      if (r.trial === 1 || r.trial === 4) assert.notEqual(r.id, before[i].id);
      else assert.equal(r.id, before[i].id, `trial ${r.trial} untouched`);
    }
    assert.equal(resumed.valid + resumed.errors, 6);
    const db = RecordsDB.open(path, { mode: "read" });
    assert.equal(db.run(first.run_id)?.status, "finished");
    db.close();

    // Without --run: the last run, finished, with a transient result.
    markLost(path, second.run_id, [0]);
    const last = await runSession({ db: path, resume: true });
    assert.equal(last.run_id, second.run_id);
    assert.deepEqual(resultsOf(path, second.run_id).map((r) => r.kind === "worker_lost"), [
      false,
      false,
      false,
    ]);
    assert.deepEqual(
      resultsOf(path, first.run_id).map((r) => r.id),
      after.map((r) => r.id),
      "the other run untouched",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the trials are a screening: the finalists are timed again by a measurer of their own, at least 40 ms a repeat", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const made: { timing: TimingOptions; batches: number; candidates: number }[] = [];
    const factory = (c: MeasurerConfig): Promise<RemoteMeasurement> => {
      const mine = { timing: c.timing, batches: 0, candidates: 0 };
      made.push(mine);
      const measurer: Measurer = {
        name: "fake",
        measure: (batch) => {
          mine.batches++;
          mine.candidates += batch.length;
          return Promise.resolve(batch.map((_, i) => ({
            errorKind: "none" as const,
            times: [1e-3 * (1 + i)],
            buildSeconds: 0,
            runSeconds: 0,
          })));
        },
      };
      return Promise.resolve({ measurer, compiler: "fake" });
    };
    const path = join(dir, "r.db");
    const { timing: _, ...untimed } = SMALL;
    const s = await runSession({ ...untimed, db: path, finalists: 2, measurer: factory });
    // The search's measurer at the trials' default, then the finalists' for their 3 rounds.
    assert.equal(made.length, 2);
    assert.deepEqual(made[0].timing, DEFAULTS.tune.timing);
    assert.equal(made[0].timing.minRepeatMs, 10);
    assert.deepEqual(made[1].timing, DEFAULTS.tune.finalistTiming);
    assert.equal(made[1].timing.minRepeatMs, 40);
    assert.equal(made[0].candidates, 6);
    assert.equal(made[1].candidates, 2 * 3);
    assert.deepEqual(s.finalists, { count: 2, rounds: 3, run_id: 2 });
    // Both timings are stored: the tuning run's two, the finalists run's own.
    const db = RecordsDB.open(path, { mode: "read" });
    const [tuning, finalists] = db.runs();
    assert.deepEqual((tuning.config as { timing: unknown }).timing, DEFAULTS.tune.timing);
    assert.deepEqual(
      (tuning.config as { finalists: { timing: unknown } }).finalists.timing,
      DEFAULTS.tune.finalistTiming,
    );
    assert.deepEqual(
      (finalists.config as { timing: unknown }).timing,
      DEFAULTS.tune.finalistTiming,
    );
    db.close();
    // Trials timed longer than the finalists' floor: the finalists at the trials' length, but
    // without the trials' noisy-repeat rule (their rounds are the second look).
    made.length = 0;
    await runSession({
      ...SMALL,
      db: join(dir, "s.db"),
      timing: { minRepeatMs: 50 },
      finalists: 2,
      measurer: factory,
    });
    assert.deepEqual(made.map((m) => [m.timing.minRepeatMs, m.timing.noisySpread]), [
      [50, DEFAULTS.tune.timing.noisySpread],
      [50, undefined],
    ]);
    // The same timing for both: one measurer.
    made.length = 0;
    await runSession({
      ...SMALL,
      db: join(dir, "u.db"),
      timing: { minRepeatMs: 50 },
      finalistTiming: { noisySpread: DEFAULTS.tune.timing.noisySpread },
      finalists: 2,
      measurer: factory,
    });
    assert.equal(made.length, 1);
    assert.equal(made[0].candidates, 6 + 2 * 3);
    // An explicit finalist timing wins.
    made.length = 0;
    await runSession({
      ...SMALL,
      db: join(dir, "t.db"),
      finalists: 2,
      finalistTiming: { minRepeatMs: 5, repeat: 7 },
      measurer: factory,
    });
    assert.deepEqual(made.map((m) => [m.timing.minRepeatMs, m.timing.repeat]), [[0, 1], [5, 7]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
