import assert from "node:assert/strict";
import { RecordsDB } from "../datasets/db.ts";
import { reportHTML, summarizeRuns } from "./report.ts";
import { comparisonSection, comparisonsOf } from "./compare_report.ts";

/** A run of two candidates 1% apart with 5% spreads, measured at `load1` on a 2-core machine. */
function noisyRun(db: RecordsDB, load1: number, apart: number): number {
  const workloadId = db.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 });
  const run = db.startRun({
    strategy: "random",
    seed: 1,
    trials: 2,
    target: "cpu",
    workloadId,
    config: {},
    machine: { cores: 2 },
    compiler: "gcc",
    tunebookVersion: "0",
  });
  for (const [i, ms] of [1, 1 + apart].entries()) {
    const id = db.addCandidate(run, { trial: i, trace: "null", traceHash: `h${i}` });
    db.addResult(id, {
      errorKind: "none",
      times: [0.95, 1, 1.05].map((x) => x * ms * 1e-3),
      buildSeconds: 0,
      runSeconds: 0,
      conditions: { load1 },
    });
  }
  return run;
}

Deno.test("report: a run within its noise gets a warning with the figures; a clear one does not", () => {
  const db = RecordsDB.open(":memory:");
  const close = noisyRun(db, 0.5, 0.01);
  const clear = noisyRun(db, 0.5, 0.5);
  const loaded = noisyRun(db, 3.1, 0.5);
  const runs = summarizeRuns(db);
  const of = (id: number) => runs.find((r) => r.id === id)!.ranking!;
  assert.equal(
    of(close).warning,
    "warning: ranking uncertain: best 1.000 ms (spread 5.0%) vs runner-up 1.010 ms (spread 5.0%), 1.0% apart",
  );
  assert.equal(of(clear).uncertain, false);
  // The load is compared with the cores of the machine that measured (2), not this one's.
  assert.deepEqual(of(loaded).reasons, ["load"]);
  assert.equal(of(loaded).cores, 2);
  const html = reportHTML(runs, { title: "t", db: "x.db", generated: "now", comparisons: [] });
  const section = (id: number) =>
    html.match(new RegExp(`<section id="run-${id}">([\\s\\S]*?)</section>`))![1];
  assert.match(section(close), /<p class="warning">warning: ranking uncertain: best 1\.000 ms/);
  assert.doesNotMatch(section(clear), /class="warning"/);
  assert.match(section(loaded), /load 3\.1 on 2 cores/);
  db.close();
});

Deno.test("report of a live comparison: the two fastest strategies' final bests within their noise are said", async () => {
  const db = RecordsDB.open(":memory:");
  const workloadId = db.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 });
  const bests: Record<string, number> = { ga: 1, random: 1.01, slow: 3 };
  for (const [strategy, ms] of Object.entries(bests)) {
    const run = db.startRun({
      strategy,
      seed: 0,
      trials: 1,
      target: "cpu",
      workloadId,
      config: { compare: "matmul:8,8,8", budget: 1 },
      machine: { cores: 2 },
      compiler: "gcc",
      tunebookVersion: "0",
    });
    const id = db.addCandidate(run, { trial: 0, trace: "null", traceHash: "h", knobs: [0] });
    db.addResult(id, {
      errorKind: "none",
      times: [0.95, 1, 1.05].map((x) => x * ms * 1e-3),
      buildSeconds: 0,
      runSeconds: 0,
    });
  }
  const [c] = await comparisonsOf(db);
  assert.deepEqual(c.ranking!.strategies, ["ga", "random"]);
  assert.equal(
    c.ranking!.warning,
    "warning: ranking uncertain: ga 1.000 ms (spread 5.0%) vs random 1.010 ms (spread 5.0%), 1.0% apart",
  );
  assert.match(comparisonSection(c), /<p class="warning">warning: ranking uncertain: ga 1\.000 ms/);
  db.close();
});
