import assert from "node:assert/strict";
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import { exportRows } from "../datasets/export_rows.ts";
import type { Measurer } from "../measure/measurer.ts";
import { createWorkload } from "../ir/workloads.ts";
import { DEFAULTS } from "../ir/defaults.ts";
import { FINALISTS_STRATEGY } from "./finalists.ts";
import { readConfirmation } from "./confirm.ts";
import { NothingToResumeError, runSession, type SessionOptions } from "./session.ts";

const W = createWorkload("matmul", [12, 10, 8]);
const SMALL: SessionOptions = {
  db: "",
  workload: { name: "matmul", shape: [12, 10, 8] },
  strategy: "random",
  seed: 3,
  trials: 6,
  batch: 3,
};

/**
 * A fake measurer: the k-th distinct trace it sees takes (k + 1) ms, except
 * the 6th, timed at a lucky 0.1 ms the first time and 10 ms after. It counts
 * the measurements of traces it has seen before (the re-timings).
 */
function luckyMeasurer(onRemeasure?: () => void) {
  const order = new Map<string, number>();
  const times = new Map<string, number>();
  let remeasured = 0;
  const measurer: Measurer = {
    name: "fake",
    measure: (batch) =>
      Promise.resolve(batch.map((c) => {
        const key = JSON.stringify(c.trace);
        if (!order.has(key)) order.set(key, order.size);
        else {
          remeasured++;
          onRemeasure?.();
        }
        const k = order.get(key)!;
        const n = (times.get(key) ?? 0) + 1;
        times.set(key, n);
        const s = k === 5 ? (n === 1 ? 1e-4 : 1e-2) : (k + 1) * 1e-3;
        return { errorKind: "none" as const, times: [s], buildSeconds: 0, runSeconds: 0 };
      })),
  };
  return {
    factory: () => Promise.resolve({ measurer, compiler: "fake" }),
    remeasured: () => remeasured,
  };
}

Deno.test("tune's finalists: the best is the confirmed one, its first figure kept, no trial added", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "r.db");
    const fake = luckyMeasurer();
    const s = await runSession({ ...SMALL, db: path, measurer: fake.factory });
    // Three finalists, three rounds: nine re-timings after the six trials.
    assert.equal(fake.remeasured(), 9);
    assert.equal(s.trials, 6);
    assert.equal(s.valid, 6);
    // The lucky 0.1 ms record loses to the 1 ms one once both are timed in turn.
    assert.equal(s.best_seconds, 1e-3);
    assert.equal(s.best_gflops, W.flops / 1e-3 / 1e9);
    assert.equal(s.confirmed_gflops, s.best_gflops);
    assert.equal(s.first_gflops, W.flops / 1e-3 / 1e9);
    assert.deepEqual(s.finalists, { count: 3, rounds: 3, run_id: 2 });
    const db = RecordsDB.open(path, { mode: "read" });
    assert.equal(db.run(s.run_id)!.status, "finished");
    assert.deepEqual(db.run(s.run_id)!.config.finalists, {
      top: 3,
      rounds: 3,
      timing: DEFAULTS.tune.finalistTiming,
    });
    assert.equal(db.counts(s.run_id).measured, 6, "the tuning run keeps its six trials");
    const best = db.candidates(s.run_id).find((c) => c.id === s.best_trace_id)!;
    assert.equal(best.trial, 0);
    const fin = db.run(2)!;
    assert.equal(fin.strategy, FINALISTS_STRATEGY);
    assert.equal(fin.config.confirms, s.run_id);
    const c = (await readConfirmation(db, s.run_id))!;
    // Fastest confirmed first: 1 ms, 2 ms, then the lucky one at its 10 ms, first figure 0.1 ms.
    assert.deepEqual(c.finalists.map((f) => f.seconds), [1e-3, 2e-3, 1e-2]);
    assert.deepEqual(c.finalists.map((f) => f.firstSeconds), [1e-3, 2e-3, 1e-4]);
    assert.deepEqual(c.finalists[2].rounds, [1e-2, 1e-2, 1e-2]);
    // An export counts the six candidates once; the re-measurements only when asked for.
    assert.deepEqual(exportRows(db).map((r) => r.run_id), [1, 1, 1, 1, 1, 1]);
    const asked = exportRows(db, { runs: [1, 2] }).filter((r) => r.run_id === 2);
    assert.deepEqual(asked.map((r) => [r.strategy, r.seconds]), [
      ["finalists", 1e-3],
      ["finalists", 2e-3],
      ["finalists", 1e-2],
    ]);
    assert.equal(JSON.parse(asked[0].run_config).confirms, 1);
    db.close();
    // A later resume finds nothing to do: the finalists run is not a run to resume.
    await assert.rejects(
      runSession({ db: path, resume: true, measurer: fake.factory }),
      NothingToResumeError,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a session stopped during its finalists stays unfinished and resumes them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "r.db");
    const stop = new AbortController();
    const first = await runSession({
      ...SMALL,
      db: path,
      signal: stop.signal,
      measurer: luckyMeasurer(() => stop.abort()).factory,
    });
    assert.equal(first.interrupted, true);
    assert.equal(first.finalists, undefined);
    let db = RecordsDB.open(path, { mode: "read" });
    assert.equal(db.run(first.run_id)!.status, "running");
    assert.equal(db.runs().length, 1, "no finalists run recorded");
    db.close();
    const fake = luckyMeasurer();
    const resumed = await runSession({ db: path, resume: true, measurer: fake.factory });
    assert.equal(resumed.run_id, first.run_id);
    // Nothing measured again as a trial; the three finalists timed three times each.
    assert.equal(resumed.valid, 6);
    assert.equal(resumed.finalists?.rounds, 3);
    assert.equal(resumed.finalists?.count, 3);
    db = RecordsDB.open(path, { mode: "read" });
    assert.equal(db.run(first.run_id)!.status, "finished");
    db.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("finalists 0 re-times nothing, and a resume asking for some contradicts the run", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "r.db");
    const fake = luckyMeasurer();
    const s = await runSession({ ...SMALL, db: path, measurer: fake.factory, finalists: 0 });
    assert.equal(fake.remeasured(), 0);
    assert.equal(s.finalists, undefined);
    assert.equal(s.first_gflops, undefined);
    assert.equal(s.best_seconds, 1e-4, "the search's own best");
    const db = RecordsDB.open(path, { mode: "read" });
    assert.equal(db.runs().length, 1);
    assert.equal(db.run(s.run_id)!.config.finalists, undefined);
    db.close();
    await assert.rejects(
      runSession({ db: path, resume: true, runId: s.run_id, finalists: 2 }),
      /--finalists 2 contradicts run 1, which was started with --finalists 0/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
