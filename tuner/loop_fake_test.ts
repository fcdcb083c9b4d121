/**
 * The tuning loop against a fake measurer and the in-memory record store:
 * deduplication, budgets in trials and wall time, exhaustion, errors
 * recorded while the run goes on, and a measurer that throws leaving a
 * resumable run.
 */
import assert from "node:assert/strict";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import type { RecordStore } from "../datasets/record_store.ts";
import type { Candidate, Observation } from "../ir/candidate.ts";
import type { Measurer, MeasureResult } from "../measure/measurer.ts";
import type { Strategy } from "../search/strategy.ts";
import { tune, type TuneOptions } from "./loop.ts";

/** Kernel x takes (1 + x % 7) ms; a multiple of 5 fails to compile. */
function resultOf(x: number): MeasureResult {
  return x % 5 === 0
    ? { errorKind: "compile_host", error: `x=${x}`, times: [], buildSeconds: 0.1, runSeconds: 0 }
    : { errorKind: "none", times: [(1 + x % 7) * 1e-3], buildSeconds: 0.1, runSeconds: 0.2 };
}

/** A measurer logging each batch; it throws on call `failOn` (0-based) and waits `delayMs` per call. */
function fakeMeasurer(log: number[][], o: { failOn?: number; delayMs?: number } = {}): Measurer {
  let calls = 0;
  return {
    name: "fake",
    async measure(batch, options) {
      const k = calls++;
      if (o.delayMs) await new Promise((r) => setTimeout(r, o.delayMs));
      if (k === o.failOn) throw new Error("the queue is gone");
      log.push(batch.map((c) => c.knobs![0]));
      return batch.map((c, i) => {
        const r = resultOf(c.knobs![0]);
        options?.onResult?.(i, r);
        return r;
      });
    },
  };
}

/**
 * Proposes x = 0, 1, 2, ... (each once), re-proposing x = 1 in every round of more than one
 * after the first (unless not `again`), and logs its calls; `upTo`: no new x past it.
 */
function counting(log: string[], upTo = Infinity, again = true): Strategy {
  let next = 0;
  return {
    name: "counting",
    propose(n) {
      const out: Candidate[] = [];
      if (again && next > 1 && n > 1) out.push({ knobs: [1] });
      while (out.length < n && next < upTo) out.push({ knobs: [next++] });
      log.push(`propose ${out.map((c) => c.knobs![0])}`);
      return out;
    },
    observe(obs: Observation[]) {
      log.push(`observe ${obs.map((o) => `${o.candidate.knobs![0]}:${o.seconds ?? o.errorKind}`)}`);
    },
  };
}

async function newRun(store: RecordStore): Promise<number> {
  const workloadId = await store.upsertWorkload({ name: "fake", shape: [1], flops: 1e6 });
  return await store.startRun({
    strategy: "counting",
    seed: 0,
    trials: 20,
    target: "fake",
    workloadId,
    config: {},
    machine: {},
    compiler: "none",
    tunebookVersion: "test",
  });
}

async function options(
  store: RecordStore,
  runId: number,
  extra: Partial<TuneOptions> = {},
): Promise<TuneOptions> {
  return {
    strategy: counting([]),
    measurer: fakeMeasurer([]),
    store,
    runId: await Promise.resolve(runId),
    trials: 20,
    batchSize: 4,
    ...extra,
  };
}

Deno.test("tune() measures each configuration once and observes re-proposals with the recorded result", async () => {
  const store = createMemoryRecordStore();
  const runId = await newRun(store);
  const batches: number[][] = [];
  const log: string[] = [];
  const out = await tune(
    await options(store, runId, { strategy: counting(log), measurer: fakeMeasurer(batches) }),
  );
  assert.equal(out.stop, "trials");
  assert.equal(out.measured, 20);
  const all = batches.flat();
  assert.equal(all.length, 20);
  assert.equal(new Set(all).size, 20, "no configuration measured twice");
  // Round 2 proposes 1 again: it is observed with its recorded time, not measured.
  assert.equal(log[2], "propose 1,4,5,6");
  assert.equal(log[3], "observe 1:0.002,4:0.005,5:compile_host,6:0.007");
  assert.equal((await store.counts(runId)).measured, 20);
});

Deno.test("tune() stops at the trial budget even when a batch would pass it", async () => {
  const store = createMemoryRecordStore();
  const runId = await newRun(store);
  const batches: number[][] = [];
  let next = 0;
  // Four new configurations a round, whatever it is asked.
  const greedy: Strategy = {
    name: "greedy",
    propose: () => Array.from({ length: 4 }, () => ({ knobs: [next++] })),
    observe() {},
  };
  const out = await tune(
    await options(store, runId, { trials: 6, strategy: greedy, measurer: fakeMeasurer(batches) }),
  );
  assert.equal(out.stop, "trials");
  assert.equal(out.measured, 6);
  assert.deepEqual(batches, [[0, 1, 2, 3], [4, 5]]);
  assert.equal((await store.candidates(runId)).length, 6);
});

Deno.test("tune() records failed candidates under their error kind and goes on", async () => {
  const store = createMemoryRecordStore();
  const runId = await newRun(store);
  const progress: { valid?: number; errors?: number }[] = [];
  await tune(await options(store, runId, { onProgress: (p) => progress.push(p) }));
  // x = 0, 5, 10, 15 fail to compile; the other 16 are valid.
  assert.deepEqual(await store.counts(runId), { measured: 20, valid: 16, errors: 4 });
  const failed = (await store.candidates(runId)).filter((c) => c.result?.errorKind !== "none");
  assert.deepEqual(failed.map((c) => c.knobs![0]), [0, 5, 10, 15]);
  assert.equal(failed[0].result?.error, "x=0");
  assert.deepEqual(progress.at(-1), { ...progress.at(-1), valid: 16, errors: 4 });
  assert.equal(progress.length, 20);
});

Deno.test("tune() ends as exhausted when the strategy proposes nothing", async () => {
  const store = createMemoryRecordStore();
  const runId = await newRun(store);
  const log: string[] = [];
  const out = await tune(await options(store, runId, { strategy: counting(log, 6, false) }));
  assert.equal(out.stop, "exhausted");
  assert.equal(out.measured, 6);
  assert.equal(log.filter((l) => l.startsWith("propose")).at(-1), "propose ");
});

Deno.test("tune() ends as exhausted after patience rounds of nothing new", async () => {
  const store = createMemoryRecordStore();
  const runId = await newRun(store);
  const log: string[] = [];
  // Past x = 3 the strategy only re-proposes x = 1.
  const out = await tune(await options(store, runId, { strategy: counting(log, 3), patience: 5 }));
  assert.equal(out.stop, "exhausted");
  assert.equal(out.measured, 3);
  assert.equal(log.filter((l) => l === "propose 1").length, 5);
});

Deno.test("tune() stops at the wall-time budget with a resumable run", async () => {
  const store = createMemoryRecordStore();
  const runId = await newRun(store);
  // Every call takes at least 5 ms: past a 1 ms budget after the first round, whatever the load.
  const first = await tune(
    await options(store, runId, {
      timeLimitSeconds: 0.001,
      measurer: fakeMeasurer([], { delayMs: 5 }),
    }),
  );
  assert.equal(first.stop, "time");
  assert.equal(first.measured, 4);
  const batches: number[][] = [];
  const rest = await tune(await options(store, runId, { measurer: fakeMeasurer(batches) }));
  assert.equal(rest.measured, 20);
  assert.equal(batches.flat().length, 16, "the first round is not measured again");
});

Deno.test("a measurer that throws stops the run, which resumes to the records of an uninterrupted one", async () => {
  const whole: string[] = [];
  const ref = createMemoryRecordStore();
  await tune(await options(ref, await newRun(ref), { strategy: counting(whole) }));

  const store = createMemoryRecordStore();
  const runId = await newRun(store);
  await assert.rejects(
    tune(await options(store, runId, { measurer: fakeMeasurer([], { failOn: 2 }) })),
    /the queue is gone/,
  );
  // Rounds 0 and 1 measured 0-3 and 4-6 (1 again is no trial); round 2's 7-9 were recorded
  // before the measurer failed, without results.
  assert.equal((await store.counts(runId)).measured, 7);
  assert.equal((await store.candidates(runId)).length, 10);
  assert.equal((await store.run(runId))?.status, "running");
  const resumed: string[] = [];
  const batches: number[][] = [];
  const out = await tune(
    await options(store, runId, { strategy: counting(resumed), measurer: fakeMeasurer(batches) }),
  );
  assert.equal(out.measured, 20);
  assert.deepEqual(resumed, whole);
  assert.equal(batches.flat().length, 13, "only what had no result is measured");
  const records = async (s: RecordStore, id: number) =>
    (await s.candidates(id)).map((c) => [c.trial, c.knobs, c.result?.seconds]);
  assert.deepEqual(await records(store, runId), await records(ref, 1));
});

Deno.test("tune() calls onMeasured with every new result in record order and the best so far", async () => {
  const store = createMemoryRecordStore();
  const runId = await newRun(store);
  const seen: [number, number, number][] = [];
  await tune(
    await options(store, runId, {
      trials: 8,
      onMeasured: (m) => seen.push([m.candidate.knobs![0], m.done, m.bestSeconds]),
    }),
  );
  assert.deepEqual(seen.map(([x]) => x), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(seen.map(([, d]) => d), [1, 2, 3, 4, 5, 6, 7, 8]);
  // x = 0 fails; x = 1 takes 2 ms, the best until x = 7 (1 ms).
  assert.equal(seen[0][2], Infinity);
  assert.equal(seen[1][2], 2e-3);
  assert.equal(seen[7][2], 1e-3);
});

Deno.test("a store that fails to write stops the run with its error, the results before it kept", async () => {
  const store = createMemoryRecordStore();
  const runId = await newRun(store);
  let writes = 0;
  const failing: RecordStore = {
    ...store,
    addResult: (id, r) =>
      ++writes === 6 ? Promise.reject(new Error("disk full")) : store.addResult(id, r),
  };
  await assert.rejects(tune(await options(failing, runId)), /disk full/);
  assert.equal((await store.counts(runId)).measured, 5);
});

Deno.test("tune() called again on a run with firstTrial numbers the new candidates after the recorded ones", async () => {
  const store = createMemoryRecordStore();
  const runId = await newRun(store);
  // One strategy going on across two calls, as the task scheduler's rounds do.
  const strategy = counting([], Infinity, false);
  await tune(await options(store, runId, { strategy, trials: 3 }));
  await tune(
    await options(store, runId, {
      strategy,
      trials: 3,
      firstTrial: (await store.candidates(runId)).length,
    }),
  );
  const rows = await store.candidates(runId);
  assert.deepEqual(rows.map((c) => c.trial), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(rows.map((c) => c.knobs![0]), [0, 1, 2, 3, 4, 5]);
});
