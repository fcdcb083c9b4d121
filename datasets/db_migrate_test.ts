import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { APPLICATION_ID, RecordsDB } from "./db.ts";

/** The `results` table as tunebook wrote it before the time parts and conditions (2026-12-01). */
const OLD_SCHEMA = `
CREATE TABLE workloads (id INTEGER PRIMARY KEY, name TEXT NOT NULL, shape TEXT NOT NULL,
  key TEXT NOT NULL UNIQUE, flops REAL NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY, created TEXT NOT NULL, finished TEXT,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished')), strategy TEXT NOT NULL,
  seed INTEGER NOT NULL, trials INTEGER NOT NULL, target TEXT NOT NULL,
  workload_id INTEGER NOT NULL REFERENCES workloads(id), config TEXT NOT NULL,
  machine TEXT NOT NULL, compiler TEXT NOT NULL, tunebook_version TEXT NOT NULL);
CREATE INDEX runs_status ON runs(status);
CREATE TABLE candidates (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),
  trial INTEGER NOT NULL, trace TEXT NOT NULL, trace_hash TEXT NOT NULL, knobs TEXT,
  created TEXT NOT NULL, UNIQUE (run_id, trace_hash));
CREATE INDEX candidates_run_trial ON candidates(run_id, trial);
CREATE TABLE results (id INTEGER PRIMARY KEY,
  candidate_id INTEGER NOT NULL UNIQUE REFERENCES candidates(id), error_kind TEXT NOT NULL,
  error TEXT, times TEXT NOT NULL, seconds REAL, gflops REAL, build_seconds REAL NOT NULL,
  run_seconds REAL NOT NULL, timestamp TEXT NOT NULL);
INSERT INTO workloads VALUES (1, 'matmul', '[8,8,8]', 'matmul:8,8,8', 1024);
INSERT INTO runs VALUES (1, '2026-12-01T00:00:00.000Z', NULL, 'running', 'random', 1, 3, 'cpu', 1,
  '{}', '{}', 'gcc', '0.1.0');
INSERT INTO candidates VALUES (1, 1, 0, '{}', 'h0', '[0]', '2026-12-01T00:00:00.000Z');
INSERT INTO results VALUES (1, 1, 'none', NULL, '[0.002,0.001,0.003]', 0.002, 5.12e-4, 0.25,
  0.125, '2026-12-01T00:00:01.000Z');
`;

function oldDatabase(): string {
  const path = join(Deno.makeTempDirSync(), "old.db");
  const raw = new DatabaseSync(path);
  raw.exec(OLD_SCHEMA);
  raw.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
  raw.exec("PRAGMA user_version = 1");
  raw.close();
  return path;
}

const OLD_ROW = {
  id: 1,
  candidateId: 1,
  errorKind: "none",
  error: null,
  times: [0.002, 0.001, 0.003],
  seconds: 0.002,
  gflops: 5.12e-4,
  buildSeconds: 0.25,
  runSeconds: 0.125,
  timestamp: "2026-12-01T00:00:01.000Z",
};

Deno.test("an old-schema database opens read-only with its rows as they were, new fields absent", () => {
  const path = oldDatabase();
  const db = RecordsDB.open(path, { mode: "read" });
  assert.deepEqual(db.candidates(1)[0].result, OLD_ROW);
  db.close();
  // Read mode wrote nothing: still the old columns.
  const raw = new DatabaseSync(path, { readOnly: true });
  const cols = (raw.prepare("PRAGMA table_info(results)").all() as { name: string }[])
    .map((c) => c.name);
  raw.close();
  assert.ok(!cols.includes("verify_seconds"));
});

Deno.test("an old-schema database migrates when written: old rows keep their values, new rows carry the fields", () => {
  const path = oldDatabase();
  const db = RecordsDB.open(path);
  assert.deepEqual(db.candidates(1)[0].result, OLD_ROW);
  const id = db.addCandidate(1, { trial: 1, trace: "{}", traceHash: "h1", knobs: [1] });
  db.addResult(id, {
    errorKind: "none",
    times: [1e-3, 1.1e-3],
    buildSeconds: 0.5,
    runSeconds: 0.2,
    verifySeconds: 0.05,
    strategySeconds: 0.01,
    frameworkSeconds: 0.002,
    conditions: { load1: 1.5, steal: 0, cpuMhz: 2400, probeGBps: 40.6 },
  });
  // Only some conditions known: the others stay absent.
  const id2 = db.addCandidate(1, { trial: 2, trace: "{}", traceHash: "h2", knobs: [2] });
  db.addResult(id2, {
    errorKind: "none",
    times: [1e-3],
    buildSeconds: 0,
    runSeconds: 0,
    conditions: { load1: 0.5 },
  });
  db.close();
  // Opened again (the columns are there now, nothing is added twice).
  const again = RecordsDB.open(path);
  const [old, fresh, partial] = again.candidates(1).map((c) => c.result!);
  assert.deepEqual(old, OLD_ROW);
  assert.equal(fresh.verifySeconds, 0.05);
  assert.equal(fresh.strategySeconds, 0.01);
  assert.equal(fresh.frameworkSeconds, 0.002);
  assert.deepEqual(fresh.conditions, { load1: 1.5, steal: 0, cpuMhz: 2400, probeGBps: 40.6 });
  assert.deepEqual(partial.conditions, { load1: 0.5 });
  assert.equal(partial.verifySeconds, undefined);
  assert.equal("strategySeconds" in partial, false);
  again.close();
  // An older tunebook's insert (without the new columns) still works on the migrated file.
  const raw = new DatabaseSync(path);
  raw.exec(`INSERT INTO candidates VALUES (9, 1, 9, '{}', 'h9', NULL, 'x');
    INSERT INTO results (candidate_id, error_kind, times, build_seconds, run_seconds, timestamp)
    VALUES (9, 'none', '[1]', 0, 0, 'x')`);
  raw.close();
  const last = RecordsDB.open(path, { mode: "read" });
  const r = last.candidates(1).find((c) => c.id === 9)!.result!;
  assert.equal(r.conditions, undefined);
  assert.equal(r.frameworkSeconds, undefined);
  last.close();
});
