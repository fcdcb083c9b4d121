import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import {
  APPLICATION_ID,
  DatabaseError,
  median,
  RecordsDB,
  type RunInfo,
  SCHEMA_VERSION,
} from "./db.ts";

const FLOPS = 2 * 64 * 64 * 64;

function tempDir(): string {
  return Deno.makeTempDirSync({ prefix: "tunebook_db_test_" });
}

function withDB(fn: (db: RecordsDB, dir: string) => void): void {
  const dir = tempDir();
  const db = RecordsDB.open(join(dir, "nested", "records.db"));
  try {
    fn(db, dir);
  } finally {
    db.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

function runInfo(workloadId: number, extra: Partial<RunInfo> = {}): RunInfo {
  return {
    strategy: "random",
    seed: 7,
    trials: 16,
    target: "c",
    workloadId,
    config: { population: 8, args: ["--trials", "16"] },
    machine: { cpu: "test", cores: 2 },
    compiler: "gcc 12",
    tunebookVersion: "0.1.0",
    ...extra,
  };
}

Deno.test("median of odd and even lists", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([5]), 5);
  assert.throws(() => median([]), RangeError);
});

Deno.test("round trip of workloads, runs, candidates and results", () => {
  withDB((db) => {
    const wl = db.upsertWorkload({ name: "matmul", shape: [64, 64, 64], flops: FLOPS });
    assert.equal(db.upsertWorkload({ name: "matmul", shape: [64, 64, 64], flops: FLOPS }), wl);
    const other = db.upsertWorkload({ name: "matmul", shape: [32, 64, 64], flops: 1 });
    assert.notEqual(other, wl);
    assert.deepEqual(db.workload(wl), {
      id: wl,
      name: "matmul",
      shape: [64, 64, 64],
      key: "matmul:64,64,64",
      flops: FLOPS,
    });

    const info = runInfo(wl);
    const run = db.startRun(info);
    const row = db.run(run)!;
    assert.equal(row.id, run);
    assert.equal(row.status, "running");
    assert.equal(row.finished, null);
    assert.ok(!Number.isNaN(Date.parse(row.created)));
    assert.deepEqual({ ...row, id: undefined, created: undefined, finished: undefined }, {
      ...info,
      id: undefined,
      created: undefined,
      finished: undefined,
      status: "running",
    });
    assert.equal(db.run(run + 100), undefined);

    const c1 = db.addCandidate(run, {
      trial: 1,
      trace: '{"steps":[1]}',
      traceHash: "h1",
      knobs: [1, 2],
    });
    const c0 = db.addCandidate(run, { trial: 0, trace: '{"steps":[0]}', traceHash: "h0" });
    const cands = db.candidates(run);
    assert.deepEqual(cands.map((c) => c.id), [c0, c1]);
    assert.equal(cands[0].knobs, null);
    assert.deepEqual(cands[1].knobs, [1, 2]);
    assert.equal(cands[1].trace, '{"steps":[1]}');
    assert.equal(cands[1].traceHash, "h1");
    assert.equal(cands[1].runId, run);
    assert.equal(cands[0].result, null);

    const rid = db.addResult(c1, {
      errorKind: "none",
      times: [3e-4, 1e-4, 2e-4],
      buildSeconds: 0.5,
      runSeconds: 0.1,
    });
    const [, m1] = db.candidates(run);
    assert.ok(m1.result);
    assert.equal(m1.result.id, rid);
    assert.equal(m1.result.candidateId, c1);
    assert.equal(m1.result.errorKind, "none");
    assert.equal(m1.result.error, null);
    assert.deepEqual(m1.result.times, [3e-4, 1e-4, 2e-4]);
    assert.equal(m1.result.seconds, 2e-4);
    assert.equal(m1.result.buildSeconds, 0.5);
    assert.equal(m1.result.runSeconds, 0.1);
    assert.ok(!Number.isNaN(Date.parse(m1.result.timestamp)));

    const measured = db.measured(run);
    assert.deepEqual([...measured.keys()], ["h1"]);
    assert.deepEqual(measured.get("h1"), m1.result);
    assert.deepEqual(db.runs().map((r) => r.id), [run]);

    // A result for a candidate that has one already, or for no candidate, is refused.
    assert.throws(
      () => db.addResult(c1, { errorKind: "none", times: [1], buildSeconds: 0, runSeconds: 0 }),
      DatabaseError,
    );
    assert.throws(
      () => db.addResult(999, { errorKind: "none", times: [1], buildSeconds: 0, runSeconds: 0 }),
      DatabaseError,
    );
  });
});

Deno.test("duplicate trace hash within a run returns the same candidate", () => {
  withDB((db) => {
    const wl = db.upsertWorkload({ name: "matmul", shape: [64, 64, 64], flops: FLOPS });
    const run = db.startRun(runInfo(wl));
    const a = db.addCandidate(run, { trial: 0, trace: "[]", traceHash: "same" });
    const b = db.addCandidate(run, { trial: 5, trace: "[1]", traceHash: "same" });
    assert.equal(a, b);
    assert.equal(db.candidates(run).length, 1);
    assert.equal(db.candidates(run)[0].trial, 0);
    // The same hash in another run is another candidate.
    const run2 = db.startRun(runInfo(wl));
    assert.notEqual(db.addCandidate(run2, { trial: 0, trace: "[]", traceHash: "same" }), a);
  });
});

Deno.test("seconds is the median of times and gflops uses the workload flops", () => {
  withDB((db) => {
    const wl = db.upsertWorkload({ name: "matmul", shape: [64, 64, 64], flops: FLOPS });
    const run = db.startRun(runInfo(wl));
    const c = db.addCandidate(run, { trial: 0, trace: "[]", traceHash: "a" });
    db.addResult(c, {
      errorKind: "none",
      times: [4e-5, 1e-5, 3e-5, 2e-5],
      buildSeconds: 0,
      runSeconds: 0,
    });
    const r = db.measured(run).get("a")!;
    assert.equal(r.seconds, 2.5e-5);
    assert.ok(Math.abs(r.gflops! - FLOPS / 2.5e-5 / 1e9) < 1e-9);

    const e = db.addCandidate(run, { trial: 1, trace: "[1]", traceHash: "b" });
    db.addResult(e, {
      errorKind: "wrong_answer",
      error: "max abs error 3.2",
      times: [1e-5],
      buildSeconds: 0.1,
      runSeconds: 0.2,
    });
    const re = db.measured(run).get("b")!;
    assert.equal(re.errorKind, "wrong_answer");
    assert.equal(re.error, "max abs error 3.2");
    assert.equal(re.seconds, null);
    assert.equal(re.gflops, null);
  });
});

Deno.test("best() picks the fastest valid result and ignores errors; counts()", () => {
  withDB((db) => {
    const wl = db.upsertWorkload({ name: "matmul", shape: [64, 64, 64], flops: FLOPS });
    const run = db.startRun(runInfo(wl));
    assert.equal(db.best(run), undefined);
    assert.deepEqual(db.counts(run), { measured: 0, valid: 0, errors: 0 });
    const add = (trial: number, errorKind: "none" | "runtime_crash", times: number[]) => {
      const id = db.addCandidate(run, { trial, trace: `[${trial}]`, traceHash: `h${trial}` });
      db.addResult(id, { errorKind, times, buildSeconds: 0, runSeconds: 0 });
      return id;
    };
    add(0, "none", [3e-4]);
    const fastest = add(1, "none", [1e-4, 1e-4, 5e-4]);
    add(2, "runtime_crash", [1e-9]);
    add(3, "none", [2e-4]);
    db.addCandidate(run, { trial: 4, trace: "[4]", traceHash: "h4" }); // unmeasured
    const best = db.best(run)!;
    assert.equal(best.id, fastest);
    assert.equal(best.trial, 1);
    assert.equal(best.result.seconds, 1e-4);
    assert.deepEqual(db.counts(run), { measured: 4, valid: 3, errors: 1 });
    assert.equal(db.candidates(run).length, 5);
    assert.equal(db.measured(run).size, 4);
  });
});

Deno.test("lastUnfinishedRun and finishRun", () => {
  withDB((db) => {
    const wl = db.upsertWorkload({ name: "conv2d", shape: [1, 3, 8, 8], flops: 1e6 });
    assert.equal(db.lastUnfinishedRun(), undefined);
    const a = db.startRun(runInfo(wl, { seed: 1 }));
    const b = db.startRun(runInfo(wl, { seed: 2 }));
    assert.equal(db.lastUnfinishedRun()!.id, b);
    db.finishRun(b);
    const fb = db.run(b)!;
    assert.equal(fb.status, "finished");
    assert.ok(fb.finished !== null && !Number.isNaN(Date.parse(fb.finished)));
    assert.equal(db.lastUnfinishedRun()!.id, a);
    db.finishRun(a);
    assert.equal(db.lastUnfinishedRun(), undefined);
    assert.deepEqual(db.runs().map((r) => [r.id, r.seed, r.status]), [
      [a, 1, "finished"],
      [b, 2, "finished"],
    ]);
    assert.throws(() => db.finishRun(12345), DatabaseError);
  });
});

Deno.test("records survive closing and reopening; schema version is set", () => {
  const dir = tempDir();
  try {
    const path = join(dir, "r.db");
    let db = RecordsDB.open(path);
    const wl = db.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 });
    const run = db.startRun(runInfo(wl));
    const c = db.addCandidate(run, { trial: 0, trace: "[]", traceHash: "x" });
    db.addResult(c, { errorKind: "none", times: [1e-6], buildSeconds: 0, runSeconds: 0 });
    db.close();
    db.close(); // harmless
    db = RecordsDB.open(path);
    assert.equal(db.best(run)!.id, c);
    assert.equal(db.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 }), wl);
    db.close();
    const raw = new DatabaseSync(path);
    assert.equal(raw.prepare("PRAGMA user_version").get()!.user_version, SCHEMA_VERSION);
    assert.equal(raw.prepare("PRAGMA journal_mode").get()!.journal_mode, "wal");
    raw.close();
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a database with a newer schema version is refused", () => {
  const dir = tempDir();
  try {
    const path = join(dir, "future.db");
    const raw = new DatabaseSync(path);
    raw.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
    raw.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    assert.throws(() => RecordsDB.open(path), (e: unknown) => {
      assert.ok(e instanceof DatabaseError);
      assert.ok(e.message.includes(path), e.message);
      assert.match(e.message, /newer/);
      return true;
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("unwritable paths throw DatabaseError naming the path", () => {
  const dir = tempDir();
  try {
    const file = join(dir, "plain-file");
    Deno.writeTextFileSync(file, "not a directory");
    const notADb = join(dir, "garbage.db");
    Deno.writeTextFileSync(notADb, "this is not a sqlite database, just some text ".repeat(100));
    for (const path of [join(file, "x.db"), join(file, "sub", "x.db"), "/proc/x.db", notADb]) {
      assert.throws(() => RecordsDB.open(path), (e: unknown) => {
        assert.ok(e instanceof DatabaseError, `${path}: ${e}`);
        assert.ok(e.message.startsWith(`Cannot open records database "${path}": `), e.message);
        assert.equal(e.path, path);
        return true;
      });
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

const WRITER = (dbUrl: string) => `
import { RecordsDB } from ${JSON.stringify(dbUrl)};
const db = RecordsDB.open(Deno.args[0]);
const wl = db.upsertWorkload({ name: "matmul", shape: [16, 16, 16], flops: 8192 });
const run = db.startRun({
  strategy: "random", seed: 0, trials: 1e9, target: "c", workloadId: wl,
  config: {}, machine: {}, compiler: "gcc", tunebookVersion: "test",
});
console.log("run " + run);
for (let i = 0; ; i++) {
  const c = db.addCandidate(run, {
    trial: i, trace: JSON.stringify({ i, pad: "x".repeat(i % 500) }), traceHash: "h" + i,
  });
  db.addResult(c, {
    errorKind: i % 7 === 0 ? "runtime_error" : "none",
    times: [1e-4 + (i % 13) * 1e-6, 2e-4],
    buildSeconds: 0.01,
    runSeconds: 0.02,
  });
  console.log(String(c));
}
`;

Deno.test("a writer killed with SIGKILL loses no committed record", async () => {
  const dir = tempDir();
  try {
    const path = join(dir, "killed.db");
    const script = join(dir, "writer.ts");
    Deno.writeTextFileSync(script, WRITER(new URL("./db.ts", import.meta.url).href));
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--allow-read", "--allow-write", "--allow-env", script, path],
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).spawn();

    const decoder = new TextDecoder();
    const reader = child.stdout.getReader();
    let text = "";
    let killed = false;
    const lines = () => text.split("\n").slice(0, -1); // complete lines only
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (!killed && lines().length > 300) {
        child.kill("SIGKILL");
        killed = true;
      }
    }
    const status = await child.status;
    const stderr = decoder.decode(await new Response(child.stderr).arrayBuffer());
    assert.ok(killed, `writer exited before being killed: ${stderr}`);
    assert.equal(status.signal, "SIGKILL");

    const [first, ...rest] = lines();
    const run = Number(first.replace("run ", ""));
    const ids = rest.map(Number);
    assert.ok(ids.length >= 300, `only ${ids.length} ids printed`);

    const db = RecordsDB.open(path);
    try {
      const byId = new Map(db.candidates(run).map((c) => [c.id, c]));
      for (const id of ids) {
        const c = byId.get(id);
        assert.ok(c, `printed candidate ${id} is missing`);
        assert.ok(c.result, `printed candidate ${id} has no result`);
      }
      assert.ok(db.counts(run).measured >= ids.length);
      assert.equal(db.lastUnfinishedRun()?.id, run);
    } finally {
      db.close();
    }
    const raw = new DatabaseSync(path);
    assert.deepEqual(
      raw.prepare("PRAGMA integrity_check").all().map((r) => r.integrity_check),
      ["ok"],
    );
    assert.equal(raw.prepare("PRAGMA foreign_key_check").all().length, 0);
    raw.close();
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

/** Makes a records database with one run and a few results; returns its path. */
function sampleDB(dir: string, name = "r.db"): string {
  const path = join(dir, name);
  const db = RecordsDB.open(path);
  const wl = db.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 });
  const run = db.startRun(runInfo(wl));
  for (let i = 0; i < 40; i++) {
    const c = db.addCandidate(run, {
      trial: i,
      trace: `[${"1,".repeat(300)}${i}]`,
      traceHash: `h${i}`,
    });
    db.addResult(c, { errorKind: "none", times: [1e-6 * (i + 1)], buildSeconds: 0, runSeconds: 0 });
  }
  db.close();
  return path;
}

function refused(path: string, mode: "create" | "write" | "read", pattern: RegExp): void {
  assert.throws(() => RecordsDB.open(path, { mode }), (e: unknown) => {
    assert.ok(e instanceof DatabaseError, `${mode}: ${e}`);
    assert.ok(e.message.startsWith(`Cannot open records database "${path}": `), e.message);
    assert.match(e.message, pattern);
    return true;
  });
}

Deno.test("a new records database is marked with tunebook's application_id", () => {
  const dir = tempDir();
  try {
    const path = sampleDB(dir);
    const raw = new DatabaseSync(path);
    assert.equal(raw.prepare("PRAGMA application_id").get()!.application_id, APPLICATION_ID);
    raw.close();
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("another program's SQLite file is refused in every mode and left byte-identical", () => {
  const dir = tempDir();
  try {
    const plain = join(dir, "app.sqlite");
    let raw = new DatabaseSync(plain);
    raw.exec(
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'x')",
    );
    raw.close();
    const wal = join(dir, "wal.sqlite");
    raw = new DatabaseSync(wal);
    raw.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1)");
    raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    raw.close();
    const marked = join(dir, "marked.sqlite");
    raw = new DatabaseSync(marked);
    raw.exec("PRAGMA application_id = 42; PRAGMA user_version = 1");
    for (const t of ["workloads", "runs", "candidates", "results"]) {
      raw.exec(`CREATE TABLE ${t} (x)`);
    }
    raw.close();
    const empty = join(dir, "empty.sqlite");
    raw = new DatabaseSync(empty);
    raw.exec("PRAGMA journal_mode = WAL");
    raw.close();
    const text = join(dir, "notes.txt");
    Deno.writeTextFileSync(text, "a,b\n1,2\n");
    const cases: [string, RegExp][] = [
      [plain, /another program's SQLite database \(tables: notes\)/],
      [wal, /another program's SQLite database \(tables: t\)/],
      [marked, /application_id 42/],
      [empty, /did not create/],
      [text, /not an SQLite database/],
    ];
    for (const [path, pattern] of cases) {
      const before = Deno.readFileSync(path);
      for (const mode of ["create", "write", "read"] as const) refused(path, mode, pattern);
      assert.deepEqual(Deno.readFileSync(path), before, path);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("modes write and read refuse a missing or empty file and create nothing", () => {
  const dir = tempDir();
  try {
    const missing = join(dir, "sub", "missing.db");
    refused(missing, "write", /no such file/);
    refused(missing, "read", /no such file/);
    assert.throws(() => Deno.statSync(join(dir, "sub")), Deno.errors.NotFound);
    const empty = join(dir, "empty.db");
    Deno.writeFileSync(empty, new Uint8Array());
    refused(empty, "read", /empty/);
    refused(empty, "write", /empty/);
    assert.equal(Deno.statSync(empty).size, 0);
    RecordsDB.open(empty).close(); // mode create adopts an empty file
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("an unmarked database of an earlier tunebook opens, and gets marked when written", () => {
  const dir = tempDir();
  try {
    const path = sampleDB(dir);
    let raw = new DatabaseSync(path);
    raw.exec("PRAGMA application_id = 0");
    raw.close();
    const before = Deno.readFileSync(path);
    let db = RecordsDB.open(path, { mode: "read" });
    assert.equal(db.counts(1).valid, 40);
    db.close();
    assert.deepEqual(Deno.readFileSync(path), before, "read mode writes nothing");
    db = RecordsDB.open(path, { mode: "write" });
    assert.equal(db.counts(1).valid, 40);
    db.close();
    raw = new DatabaseSync(path);
    assert.equal(raw.prepare("PRAGMA application_id").get()!.application_id, APPLICATION_ID);
    raw.close();
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a database opened in read mode refuses writes with a DatabaseError saying read-only", () => {
  const dir = tempDir();
  try {
    const db = RecordsDB.open(sampleDB(dir), { mode: "read" });
    try {
      assert.throws(
        () => db.upsertWorkload({ name: "matmul", shape: [2, 2, 2], flops: 16 }),
        (e: unknown) => e instanceof DatabaseError && /read-only/.test(e.message),
      );
    } finally {
      db.close();
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("bad JSON in runs.config is a DatabaseError naming the run and the field", () => {
  const dir = tempDir();
  try {
    const path = sampleDB(dir);
    const raw = new DatabaseSync(path);
    raw.exec("UPDATE runs SET config = '{not json'");
    raw.close();
    const db = RecordsDB.open(path);
    try {
      for (const read of [() => db.runs(), () => db.run(1), () => db.lastUnfinishedRun()]) {
        assert.throws(read, (e: unknown) => {
          assert.ok(e instanceof DatabaseError);
          assert.match(e.message, /run 1: field config is not valid JSON/);
          assert.ok(e.message.includes(path));
          return true;
        });
      }
    } finally {
      db.close();
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a garbled page is a DatabaseError naming the file, on open or on read", () => {
  const dir = tempDir();
  try {
    const path = sampleDB(dir);
    const bytes = Deno.readFileSync(path);
    const page = 4096;
    assert.ok(bytes.length >= 4 * page, `${bytes.length} bytes`);
    for (let i = page; i < bytes.length; i++) bytes[i] = (i * 131) & 0xff;
    Deno.writeFileSync(path, bytes);
    assert.throws(() => {
      const db = RecordsDB.open(path, { mode: "read" });
      try {
        db.runs().forEach((r) => db.candidates(r.id));
      } finally {
        db.close();
      }
    }, (e: unknown) => {
      assert.ok(e instanceof DatabaseError, String(e));
      assert.ok(e.message.includes(path), e.message);
      assert.match(e.message, /damaged/);
      return true;
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
