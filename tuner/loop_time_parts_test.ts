import assert from "node:assert/strict";
import { tune } from "./loop.ts";
import { liveClock, liveRunTrace } from "./compare_time.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import { RecordsDB } from "../datasets/db.ts";
import { sqliteRecordStore } from "../datasets/record_store.ts";
import type { Measurer } from "../measure/measurer.ts";
import { conditionsReader, withConditions } from "../measure/conditions.ts";
import { gridSearch } from "../search/grid.ts";
import { KnobSpace } from "../ir/knobs.ts";
import type { Strategy } from "../search/strategy.ts";

/** A hand-made machine answers only from its files: no Deno.loadavg, no os.cpus. */
const NO_API = { loadavg: () => undefined, cpuSpeeds: () => undefined };

const space = new KnobSpace([{ name: "x", kind: "other", options: [1, 2, 3, 4, 5, 6] }]);

/** A fake live measurer: fixed build, run and verification seconds, no waiting. */
const fake: Measurer = {
  name: "fake",
  measure: (batch) =>
    Promise.resolve(batch.map((c) => ({
      errorKind: "none" as const,
      times: [c.knobs![0] * 1e-3, c.knobs![0] * 1.1e-3],
      buildSeconds: 0.5,
      runSeconds: 0.2,
      verifySeconds: 0.05,
    }))),
};

/** A strategy whose propose takes `ms` of wall time (a busy wait), to see it attributed. */
function slow(inner: Strategy, ms: number): Strategy {
  return {
    name: inner.name,
    propose(n) {
      const t0 = performance.now();
      while (performance.now() - t0 < ms) { /* busy */ }
      return inner.propose(n);
    },
    observe: (obs) => inner.observe(obs),
  };
}

for (
  const [name, open] of [
    ["memory", () => createMemoryRecordStore()],
    ["sqlite", () => sqliteRecordStore(RecordsDB.open(":memory:"))],
  ] as const
) {
  Deno.test(`a live tune records the time parts and conditions of each result (${name} store)`, async () => {
    const store = open();
    const workloadId = await store.upsertWorkload({ name: "x", shape: [6], flops: 1 });
    const runId = await store.startRun({
      strategy: "grid",
      seed: 0,
      trials: 6,
      target: "fake",
      workloadId,
      config: {},
      machine: {},
      compiler: "",
      tunebookVersion: "0",
    });
    // Counters that grow by 100 jiffies, 10 of them stolen, at every read: 10% steal.
    let n = 1;
    const reader = conditionsReader({
      ...NO_API,
      readFile: (p) => {
        if (p === "/proc/loadavg") return "2.50 1.00 0.50 1/1 1\n";
        if (p !== "/proc/stat") return undefined;
        n++;
        return `cpu  ${90 * n} 0 0 0 0 0 0 ${10 * n} 0 0\n`;
      },
      listDir: () => undefined,
    });
    const out = await tune({
      strategy: slow(gridSearch(space), 5),
      measurer: withConditions(fake, reader),
      store,
      runId,
      trials: 6,
      batchSize: 3,
    });
    assert.equal(out.measured, 6);
    const rows = (await store.candidates(runId)).map((c) => c.result!);
    assert.equal(rows.length, 6);
    for (const r of rows) {
      assert.equal(r.verifySeconds, 0.05);
      assert.equal(r.buildSeconds, 0.5);
      // Each round's propose (>= 5 ms) is shared by its 3 new candidates.
      assert.ok(r.strategySeconds! >= 0.005 / 3 - 1e-9, `strategy ${r.strategySeconds}`);
      assert.ok(r.frameworkSeconds! >= 0);
      assert.deepEqual(r.conditions, { load1: 2.5, steal: 0.1 });
    }
    // The strategy parts of the run add up to the loop's propose + observe time before the last round.
    const strategy = rows.reduce((a, r) => a + r.strategySeconds!, 0);
    assert.ok(strategy <= out.timings.propose + out.timings.observe + 1e-9);
    await store.close();
  });
}

Deno.test("a result without conditions or verification records them as absent", async () => {
  const store = createMemoryRecordStore();
  const workloadId = await store.upsertWorkload({ name: "x", shape: [6], flops: 1 });
  const runId = await store.startRun({
    strategy: "grid",
    seed: 0,
    trials: 2,
    target: "fake",
    workloadId,
    config: {},
    machine: {},
    compiler: "",
    tunebookVersion: "0",
  });
  const plain: Measurer = {
    name: "plain",
    measure: (b) =>
      Promise.resolve(b.map(() => ({
        errorKind: "none" as const,
        times: [1e-3],
        buildSeconds: 0,
        runSeconds: 0,
      }))),
  };
  await tune({ strategy: gridSearch(space), measurer: plain, store, runId, trials: 2 });
  for (const c of await store.candidates(runId)) {
    assert.equal(c.result!.verifySeconds, undefined);
    assert.equal(c.result!.conditions, undefined);
    assert.equal(typeof c.result!.strategySeconds, "number");
    assert.equal(typeof c.result!.frameworkSeconds, "number");
  }
});

Deno.test("the time parts of a run's results sum to no more than its wall time (liveClock)", async () => {
  const store = createMemoryRecordStore();
  const workloadId = await store.upsertWorkload({ name: "x", shape: [6], flops: 1 });
  const runId = await store.startRun({
    strategy: "grid",
    seed: 0,
    trials: 6,
    target: "fake",
    workloadId,
    config: {},
    machine: {},
    compiler: "",
    tunebookVersion: "0",
  });
  // Build and run cost nothing here: the clock is the strategy's and the loop's own time.
  const free: Measurer = {
    name: "free",
    measure: (b) =>
      Promise.resolve(b.map((c) => ({
        errorKind: "none" as const,
        times: [(c.knobs![0] + 1) * 1e-3],
        buildSeconds: 0,
        runSeconds: 0,
      }))),
  };
  const out = await tune({
    strategy: slow(gridSearch(space), 5),
    measurer: free,
    store,
    runId,
    trials: 6,
    batchSize: 2,
  });
  const trace = await liveRunTrace(store, runId);
  assert.equal(trace.evals, 6);
  assert.deepEqual(trace.best, [1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3]);
  const clock = trace.wall;
  assert.ok(clock.every((t, i) => i === 0 || t >= clock[i - 1]));
  // Three rounds of >= 5 ms proposals are on the clock, and the clock is within the wall time.
  assert.ok(clock.at(-1)! >= 0.015 - 1e-9, `${clock.at(-1)}`);
  assert.ok(clock.at(-1)! <= out.timings.wall + 1e-9, `${clock.at(-1)} > ${out.timings.wall}`);
  // Without the strategy's time, only the loop's own (framework) time is left.
  const results = (await store.candidates(runId)).map((c) => c.result!);
  const framework = results.reduce((a, r) => a + r.frameworkSeconds!, 0);
  assert.ok(Math.abs(liveClock(results, { strategyTime: false }).at(-1)! - framework) < 1e-12);
});
