import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { DatabaseError, median, RecordsDB, type RunInfo, SCHEMA_VERSION } from "./db.ts";

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
