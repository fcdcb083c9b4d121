import assert from "node:assert/strict";
import { DatabaseError, RecordsDB } from "./db.ts";
import { createMemoryRecordStore } from "./memory_store.ts";
import { type RecordStore, sqliteRecordStore } from "./record_store.ts";
import { startTestRun as startRun } from "./_testing_store.ts";

const STORES: [string, () => RecordStore][] = [
  ["sqliteRecordStore", () => sqliteRecordStore(RecordsDB.open(":memory:"))],
  ["createMemoryRecordStore", () => createMemoryRecordStore()],
];

for (const [name, open] of STORES) {
  Deno.test(`${name}: a run keeps its config, and finishing it leaves no unfinished run`, async () => {
    const store = open();
    const run = await startRun(store, { trials: 4, batch: 2 });
    assert.equal((await store.lastUnfinishedRun())?.id, run);
    assert.deepEqual((await store.run(run))?.config, { trials: 4, batch: 2 });
    assert.equal((await store.run(run))?.status, "running");
    await store.finishRun(run);
    assert.equal((await store.run(run))?.status, "finished");
    assert.equal(await store.lastUnfinishedRun(), undefined);
    assert.deepEqual((await store.runs()).map((r) => [r.id, r.status]), [[run, "finished"]]);
    assert.equal(await store.run(99), undefined);
    await assert.rejects(store.finishRun(99), DatabaseError);
    await store.close();
  });

  Deno.test(`${name}: the same workload is stored once`, async () => {
    const store = open();
    const w = { name: "matmul", shape: [8, 8, 8], flops: 1024 };
    const a = await store.upsertWorkload(w);
    assert.equal(await store.upsertWorkload(w), a);
    assert.notEqual(await store.upsertWorkload({ ...w, shape: [8, 8, 16] }), a);
    assert.equal((await store.workload(a))?.key, "matmul:8,8,8");
    await store.close();
  });

  Deno.test(`${name}: a trace hash is recorded once per run, and results come back by hash`, async () => {
    const store = open();
    const run = await startRun(store);
    const a = await store.addCandidate(run, { trial: 0, trace: "{}", traceHash: "a", knobs: [1] });
    assert.equal(await store.addCandidate(run, { trial: 5, trace: "{}", traceHash: "a" }), a);
    const b = await store.addCandidate(run, { trial: 1, trace: "{}", traceHash: "b" });
    const ra = await store.addResult(a, {
      errorKind: "none",
      times: [3e-6, 1e-6, 2e-6],
      buildSeconds: 0.5,
      runSeconds: 0.25,
    });
    assert.equal(ra.seconds, 2e-6);
    assert.ok(Math.abs(ra.gflops! - 1024 / 2e-6 / 1e9) < 1e-9);
    assert.equal(ra.candidateId, a);
    const rb = await store.addResult(b, {
      errorKind: "compile_host",
      error: "syntax",
      times: [],
      buildSeconds: 0.1,
      runSeconds: 0,
    });
    assert.equal(rb.seconds, null);
    assert.equal(rb.error, "syntax");
    const measured = await store.measured(run);
    assert.deepEqual([...measured.keys()], ["a", "b"]);
    assert.deepEqual(measured.get("a"), ra);
    assert.deepEqual(await store.counts(run), { measured: 2, valid: 1, errors: 1 });
    const best = await store.best(run);
    assert.equal(best?.id, a);
    assert.deepEqual(best?.knobs, [1]);
    assert.deepEqual((await store.candidates(run)).map((c) => c.traceHash), ["a", "b"]);
    await store.close();
  });

  Deno.test(`${name}: a transient result is replaced, a final one is not`, async () => {
    const store = open();
    const run = await startRun(store);
    const a = await store.addCandidate(run, { trial: 0, trace: "{}", traceHash: "a" });
    const lost = { errorKind: "worker_lost" as const, times: [], buildSeconds: 0, runSeconds: 0 };
    await store.addResult(a, lost);
    const ok = { errorKind: "none" as const, times: [1e-6], buildSeconds: 0, runSeconds: 0 };
    await store.addResult(a, ok);
    assert.equal((await store.measured(run)).get("a")?.errorKind, "none");
    await assert.rejects(store.addResult(a, ok), /already has a result/);
    await assert.rejects(store.addResult(77, ok), DatabaseError);
    await assert.rejects(
      store.addResult(a, { ...ok, errorKind: "bogus" as "none" }),
      /Unknown error kind/,
    );
    await store.close();
  });

  Deno.test(`${name}: runs do not see each other's candidates`, async () => {
    const store = open();
    const one = await startRun(store);
    const two = await startRun(store);
    await store.addCandidate(one, { trial: 0, trace: "{}", traceHash: "a" });
    const b = await store.addCandidate(two, { trial: 0, trace: "{}", traceHash: "a" });
    await store.addResult(b, { errorKind: "none", times: [1], buildSeconds: 0, runSeconds: 0 });
    assert.equal((await store.measured(one)).size, 0);
    assert.equal((await store.measured(two)).size, 1);
    assert.equal(await store.best(one), undefined);
    await store.close();
  });
}
