/**
 * Arquero tables of records and comparisons (datasets/tables.ts,
 * search/comparison_frame.ts) and their display (tuner/jupyter.ts).
 */
import assert from "node:assert/strict";
// arquero 8 asks for @uwdata/flechette ^2; 2.7 needs a package the npm registry lacks, so the
// module graph pins 2.6.0 (no deno.json needed: this holds for an importer in any folder).
import "npm:@uwdata/flechette@2.6.0";
import { op, table } from "npm:arquero@8.0.3";
import { RecordsDB } from "../datasets/db.ts";
import { exportRows } from "../datasets/export_rows.ts";
import { recordsTable, runTable } from "../datasets/tables.ts";
import { median } from "../ir/stats.ts";
import { compareRows, type RunTrace } from "../search/comparison.ts";
import { compareFrame, runsFrame } from "../search/comparison_frame.ts";
import { htmlTable, show } from "../tuner/jupyter.ts";

/** A run of 4 candidates, 3 measured (one failed), and a second run of 1. */
function fixture(): { db: RecordsDB; run: number } {
  const db = RecordsDB.open(":memory:");
  const workloadId = db.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 });
  const start = () =>
    db.startRun({
      strategy: "random",
      seed: 1,
      trials: 4,
      target: "cpu",
      workloadId,
      config: {},
      machine: {},
      compiler: "gcc",
      tunebookVersion: "test",
    });
  const run = start();
  const times = [[2e-6, 3e-6, 4e-6], [], [1e-6], null];
  times.forEach((t, trial) => {
    const c = db.addCandidate(run, { trial, trace: `{"t":${trial}}`, traceHash: `h${trial}` });
    if (t === null) return;
    db.addResult(c, {
      errorKind: t.length ? "none" : "runtime_error",
      ...(t.length ? {} : { error: "boom" }),
      times: t,
      buildSeconds: 0.5,
      runSeconds: 0.1,
    });
  });
  const other = start();
  const c = db.addCandidate(other, { trial: 0, trace: "{}", traceHash: "x" });
  db.addResult(c, { errorKind: "none", times: [1e-6], buildSeconds: 0, runSeconds: 0 });
  return { db, run };
}

Deno.test("runTable holds a run's measured candidates in trial order, with the best so far", () => {
  const { db, run } = fixture();
  const t = runTable(db, run);
  // Stored trials 0, 1, 2, numbered from 1 as in an export (recordsTable) and every table.
  assert.deepEqual(t.array("trial"), [1, 2, 3]);
  assert.deepEqual(t.array("error_kind"), ["none", "runtime_error", "none"]);
  assert.equal(t.get("seconds", 0), median([2e-6, 3e-6, 4e-6]));
  assert.equal(t.get("gflops", 1), null);
  const g0 = t.get("gflops", 0), g2 = t.get("gflops", 2);
  assert.deepEqual(t.array("best_gflops"), [g0, g0, Math.max(g0, g2)]);
  assert.deepEqual(t.array("repeats"), [3, 0, 1]);
  // A data frame: group and count without a loop.
  const kinds = t.groupby("error_kind").count().orderby("error_kind").objects();
  assert.deepEqual(kinds, [{ error_kind: "none", count: 2 }, {
    error_kind: "runtime_error",
    count: 1,
  }]);
  assert.throws(() => runTable(db, 99), /No run 99/);
  db.close();
});

Deno.test("recordsTable holds the export's rows and columns", () => {
  const { db } = fixture();
  const rows = exportRows(db);
  const t = recordsTable(db);
  assert.equal(t.numRows(), rows.length);
  assert.deepEqual(t.columnNames(), Object.keys(rows[0]));
  assert.deepEqual(t.objects(), rows);
  assert.equal(recordsTable(db, { runs: [2] }).numRows(), 1);
  // One base for trials: the export's rows of run 1 and runTable agree.
  const run1 = recordsTable(db, { runs: [1] }).array("trial");
  assert.deepEqual(Array.from(run1), Array.from(runTable(db, 1).array("trial")));
  db.close();
});

Deno.test("runsFrame is the runs in long form; compareFrame the rows compare tables", () => {
  const runs = new Map<string, RunTrace[]>([
    ["a", [{ best: [4, 2], wall: [0.1, 0.2], evals: 2 }, {
      best: [Infinity, 1],
      wall: [1, 2],
      evals: 2,
    }]],
    ["b", [{ best: [1], wall: [0.5], evals: 1 }]],
  ]);
  const long = runsFrame(runs, 1);
  assert.deepEqual(long.objects(), [
    { strategy: "a", seed: 0, evaluation: 1, best_seconds: 4, fraction: 0.25, wall_seconds: 0.1 },
    { strategy: "a", seed: 0, evaluation: 2, best_seconds: 2, fraction: 0.5, wall_seconds: 0.2 },
    { strategy: "a", seed: 1, evaluation: 1, best_seconds: Infinity, fraction: 0, wall_seconds: 1 },
    { strategy: "a", seed: 1, evaluation: 2, best_seconds: 1, fraction: 1, wall_seconds: 2 },
    { strategy: "b", seed: 0, evaluation: 1, best_seconds: 1, fraction: 1, wall_seconds: 0.5 },
  ]);
  assert.deepEqual(compareFrame(runs, [1, 2], 1).objects(), compareRows(runs, [1, 2], 1));
});

Deno.test("figures come from ir/stats.ts: arquero's median of a list with infinities is NaN", () => {
  // Samples to reach a target, Infinity for a seed that never did: the median is 2 samples.
  const samples = [1, 2, Infinity];
  assert.equal(median(samples), 2);
  const aq = table({ n: samples }).rollup({ m: op.median("n") }).get("m", 0);
  assert.ok(Number.isNaN(aq), `arquero gave ${aq}`);
});

Deno.test("an arquero table shows as htmlTable shows its rows", async () => {
  const t = table({ strategy: ["a", "b<"], fraction: [0.123456, 1] });
  const fromTable = htmlTable(t), fromRows = htmlTable(t.objects());
  assert.equal(fromTable.html, fromRows.html);
  assert.match(fromTable.html, /<td>b&lt;<\/td><td>1<\/td>/);
  assert.equal(
    fromTable.text,
    "| strategy | fraction |\n| --- | --- |\n| a | 0.1235 |\n| b< | 1 |",
  );
  const lines: string[] = [];
  const log = console.log;
  console.log = (x: unknown) => void lines.push(String(x));
  try {
    await show(t);
  } finally {
    console.log = log;
  }
  assert.deepEqual(lines, [fromTable.text]);
});
