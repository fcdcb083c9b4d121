import assert from "node:assert/strict";
import pg from "npm:pg@8.23.1";
import { DatabaseError, RecordsDB } from "./db.ts";
import { displayUrl, isPostgresUrl, openPostgresRecordStore } from "./postgres_store.ts";
import { type RecordStore, sqliteRecordStore } from "./record_store.ts";
import { startTestRun as startRun } from "./_testing_store.ts";
import { postgresMissing, type Service, startPostgres } from "../remote/testing.ts";

const missing = postgresMissing();
if (missing) console.warn(missing);
const opts = { ignore: missing !== undefined, sanitizeOps: false, sanitizeResources: false };

Deno.test("isPostgresUrl() and displayUrl() tell a server from a file and hide the password", () => {
  assert.ok(isPostgresUrl("postgres://u@h/db") && isPostgresUrl("postgresql://h/db"));
  assert.ok(!isPostgresUrl("runs.db"));
  assert.equal(displayUrl("postgres://u:secret@h:5/db"), "postgres://u:***@h:5/db");
});

let server: Service | undefined;
let databases = 0;
/** A fresh database on the test server. */
async function fresh(): Promise<string> {
  server ??= await startPostgres();
  const name = `t${++databases}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return server.url.replace(/\/postgres$/, `/${name}`);
}

/** The same calls on the SQLite store and on PostgreSQL give the same records (ids and times aside). */
async function script(store: RecordStore) {
  const run = await startRun(store, { batch: 2 });
  assert.equal(await store.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 }), 1);
  const a = await store.addCandidate(run, { trial: 0, trace: "{}", traceHash: "a", knobs: [1, 2] });
  assert.equal(await store.addCandidate(run, { trial: 5, trace: "{}", traceHash: "a" }), a);
  const b = await store.addCandidate(run, { trial: 1, trace: '{"x":1}', traceHash: "b" });
  const c = await store.addCandidate(run, { trial: 2, trace: "{}", traceHash: "c" });
  await store.addResult(a, {
    errorKind: "none",
    times: [3, 1, 2],
    buildSeconds: 0.5,
    runSeconds: 1,
  });
  await store.addResult(b, { errorKind: "worker_lost", times: [], buildSeconds: 0, runSeconds: 0 });
  await store.addResult(b, { errorKind: "none", times: [1e-6], buildSeconds: 0, runSeconds: 0 });
  await store.addResult(c, {
    errorKind: "wrong_answer",
    error: "off",
    times: [],
    buildSeconds: 0,
    runSeconds: 0,
  });
  await assert.rejects(
    store.addResult(c, { errorKind: "none", times: [1], buildSeconds: 0, runSeconds: 0 }),
    DatabaseError,
  );
  await assert.rejects(
    store.addResult(a, { errorKind: "bogus" as "none", times: [], buildSeconds: 0, runSeconds: 0 }),
    /Unknown error kind/,
  );
  const unfinished = (await store.lastUnfinishedRun())?.id;
  await store.finishRun(run);
  const other = await startRun(store);
  await store.addCandidate(other, { trial: 0, trace: "{}", traceHash: "a" });
  const strip = (x: unknown) =>
    JSON.parse(
      JSON.stringify(x, (k, v) =>
        ["id", "created", "finished", "timestamp", "candidateId"].includes(k) ? undefined : v),
    );
  return strip({
    unfinished,
    runs: await store.runs(),
    candidates: await store.candidates(run),
    measured: [...(await store.measured(run))],
    counts: await store.counts(run),
    best: await store.best(run),
    otherMeasured: (await store.measured(other)).size,
    workload: await store.workload(1),
    last: (await store.lastUnfinishedRun())?.id,
  });
}

Deno.test({
  ...opts,
  name: "openPostgresRecordStore() keeps the records the SQLite store keeps, call for call",
  async fn() {
    const store = await openPostgresRecordStore(await fresh());
    try {
      const want = await script(sqliteRecordStore(RecordsDB.open(":memory:")));
      assert.deepEqual(await script(store), want);
      // A config comes back with its keys in their order (compare --resume matches its text).
      const ordered = await startRun(store, { zeta: 1, alpha: { y: 2, b: 3 } });
      assert.equal(
        JSON.stringify((await store.run(ordered))!.config),
        '{"zeta":1,"alpha":{"y":2,"b":3}}',
      );
    } finally {
      await store.close();
    }
  },
});

Deno.test({
  ...opts,
  name:
    "openPostgresRecordStore() adds the time parts and conditions to an older database: old rows read them as absent, new rows carry them",
  async fn() {
    const url = await fresh();
    // The tables as an earlier tunebook made them, with one result.
    const raw = new pg.Client({ connectionString: url });
    await raw.connect();
    try {
      await raw.query(`
        CREATE TABLE tb_workloads (id SERIAL PRIMARY KEY, key TEXT UNIQUE NOT NULL,
          name TEXT NOT NULL, shape INTEGER[] NOT NULL, flops DOUBLE PRECISION NOT NULL);
        CREATE TABLE tb_runs (id SERIAL PRIMARY KEY, strategy TEXT NOT NULL,
          seed DOUBLE PRECISION NOT NULL, trials INTEGER NOT NULL, target TEXT NOT NULL,
          workload_id INTEGER NOT NULL REFERENCES tb_workloads(id), config JSON NOT NULL,
          machine JSON NOT NULL, compiler TEXT NOT NULL, tunebook_version TEXT NOT NULL,
          created TIMESTAMPTZ NOT NULL DEFAULT now(), finished TIMESTAMPTZ,
          status TEXT NOT NULL DEFAULT 'running');
        CREATE TABLE tb_candidates (id SERIAL PRIMARY KEY,
          run_id INTEGER NOT NULL REFERENCES tb_runs(id), trial INTEGER NOT NULL,
          trace TEXT NOT NULL, trace_hash TEXT NOT NULL, knobs INTEGER[],
          created TIMESTAMPTZ NOT NULL DEFAULT now(), UNIQUE (run_id, trace_hash));
        CREATE TABLE tb_results (id SERIAL PRIMARY KEY,
          candidate_id INTEGER UNIQUE NOT NULL REFERENCES tb_candidates(id),
          error_kind TEXT NOT NULL, error TEXT, times DOUBLE PRECISION[] NOT NULL,
          seconds DOUBLE PRECISION, gflops DOUBLE PRECISION,
          build_seconds DOUBLE PRECISION NOT NULL, run_seconds DOUBLE PRECISION NOT NULL,
          timestamp TIMESTAMPTZ NOT NULL DEFAULT now());
        INSERT INTO tb_workloads (key, name, shape, flops) VALUES ('m:8', 'm', '{8}', 1);
        INSERT INTO tb_runs (strategy, seed, trials, target, workload_id, config, machine,
          compiler, tunebook_version) VALUES ('random', 0, 2, 'cpu', 1, '{}', '{}', 'gcc', '0');
        INSERT INTO tb_candidates (run_id, trial, trace, trace_hash) VALUES (1, 0, '{}', 'old');
        INSERT INTO tb_results (candidate_id, error_kind, times, seconds, build_seconds,
          run_seconds) VALUES (1, 'none', '{0.002}', 0.002, 0.25, 0.125);`);
    } finally {
      await raw.end();
    }
    const store = await openPostgresRecordStore(url);
    try {
      const [old] = (await store.candidates(1)).map((c) => c.result!);
      assert.equal(old.buildSeconds, 0.25);
      assert.equal(old.runSeconds, 0.125);
      assert.deepEqual(old.times, [0.002]);
      assert.equal(old.verifySeconds, undefined);
      assert.equal(old.conditions, undefined);
      const id = await store.addCandidate(1, { trial: 1, trace: "{}", traceHash: "new" });
      const row = await store.addResult(id, {
        errorKind: "none",
        times: [1e-3],
        buildSeconds: 0.5,
        runSeconds: 0.2,
        verifySeconds: 0.05,
        strategySeconds: 0.01,
        frameworkSeconds: 0.002,
        conditions: { load1: 1.5, cpuMhz: 2400, probeGBps: 21.3 },
      });
      assert.equal(row.verifySeconds, 0.05);
      const back = (await store.measured(1)).get("new")!;
      assert.equal(back.strategySeconds, 0.01);
      assert.equal(back.frameworkSeconds, 0.002);
      assert.deepEqual(back.conditions, { load1: 1.5, cpuMhz: 2400, probeGBps: 21.3 });
    } finally {
      await store.close();
    }
  },
});

Deno.test({
  ...opts,
  name: "two tuners on one PostgreSQL database: a trace hash raced by both is recorded once",
  async fn() {
    const url = await fresh();
    const [one, two] = await Promise.all([
      openPostgresRecordStore(url),
      openPostgresRecordStore(url),
    ]);
    try {
      const run = await startRun(one);
      const ids = await Promise.all(
        Array.from(
          { length: 20 },
          (_, i) =>
            (i % 2 ? one : two).addCandidate(run, {
              trial: i,
              trace: "{}",
              traceHash: `h${i % 5}`,
            }),
        ),
      );
      assert.equal(new Set(ids).size, 5);
      assert.equal((await two.candidates(run)).length, 5);
    } finally {
      await one.close();
      await two.close();
    }
  },
});

Deno.test({
  ...opts,
  name:
    "openPostgresRecordStore() on an unreachable server is a DatabaseError naming the URL without its password",
  async fn() {
    await assert.rejects(
      openPostgresRecordStore("postgres://u:secret@127.0.0.1:1/none"),
      (e: Error) =>
        e instanceof DatabaseError && /postgres:\/\/u:\*\*\*@127\.0\.0\.1:1/.test(e.message) &&
        !/secret/.test(e.message),
    );
  },
});

Deno.test({
  ...opts,
  name: "the PostgreSQL test server stops",
  async fn() {
    await server?.stop();
  },
});
