/**
 * The tuning loop over the native measurer with a fake builder and runner
 * (no compiler, no worker): the pipelined rounds of `overlap` build round
 * k+1 while round k is measured, record the same trials, and resume exactly.
 * The loop's own behaviour against a fake measurer and the in-memory store
 * is in loop_fake_test.ts.
 */
import assert from "node:assert/strict";
import { RecordsDB } from "../datasets/db.ts";
import { sqliteRecordStore } from "../datasets/record_store.ts";
import type { Trace } from "../ir/trace.ts";
import { createWorkload } from "../ir/workloads.ts";
import type { Builder } from "../measure/builder.ts";
import { createNativeMeasurer } from "../measure/native.ts";
import type { Runner } from "../measure/runner.ts";
import type { BuildResult, RunResult } from "../measure/types.ts";
import type { Candidate, Observation, Strategy } from "../search/strategy.ts";
import { tune, type TuneOptions } from "./loop.ts";

const workload = createWorkload("matmul", [8, 8, 8]);

/** A trace that only serves as a distinct, hashable identity. */
function traceOf(n: number): Trace {
  return { version: 1, workload: { name: "matmul", shape: [8, 8, 8] }, insts: [], n } as Trace;
}

/**
 * Proposes candidates that depend on everything observed so far, and logs
 * every call: two runs give the same log only if the strategy saw the same
 * calls in the same order.
 */
function adaptiveStrategy(log: string[]): Strategy {
  let observed = 0, next = 0;
  return {
    name: "adaptive",
    propose(n: number): Candidate[] {
      const out = Array.from({ length: n }, () => ({ trace: traceOf(next++ * 7 + observed) }));
      // One re-proposal per round exercises the re-observed path.
      if (next > n && n > 1) out[0] = { trace: traceOf(0) };
      log.push(`propose ${out.map((c) => (c.trace as unknown as { n: number }).n).join(",")}`);
      return out;
    },
    observe(obs: Observation[]) {
      observed += obs.length;
      log.push(`observe ${obs.map((o) => (o.candidate.trace as unknown as { n: number }).n)}`);
    },
  };
}

/**
 * Builder and runner that wait instead of working, logging when each batch
 * starts and ends. With `gate`, measuring batch k does not end before build
 * k + 2 (the next round's candidates; build 0 is the reference) has ended,
 * when there is a next round: a loop that overlaps passes that gate whatever
 * the speed or the load, and one that does not fails with the gate's message
 * instead of hanging. Nothing depends on which timer fires first.
 */
function fakes(events: string[], failAfter = Infinity, gate?: { rounds: number }) {
  let builds = 0, runs = 0, measured = 0;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const built = new Map<number, () => void>();
  const builtPromises = new Map<number, Promise<void>>();
  const buildEnded = (k: number) => {
    if (!builtPromises.has(k)) {
      builtPromises.set(k, new Promise<void>((resolve) => built.set(k, resolve)));
    }
    return builtPromises.get(k)!;
  };
  const builder: Builder = {
    async build(inputs) {
      const k = builds++;
      events.push(`build ${k} start`);
      await sleep(1);
      events.push(`build ${k} end`);
      buildEnded(k);
      built.get(k)!();
      return inputs.map((input, i): BuildResult => ({
        errorKind: "none",
        artifact: `/fake/${k}-${i}-${input.source}`,
        buildSeconds: 0.001,
        cached: false,
        hash: `${k}-${i}`,
      }));
    },
    describe: () => Promise.resolve("fake"),
  };
  const runner: Runner = {
    async run(inputs, onResult) {
      const k = runs++;
      events.push(`measure ${k} start`);
      const out: RunResult[] = [];
      for (const [i, input] of inputs.entries()) {
        await sleep(1);
        if (measured++ >= failAfter) throw new Error("killed");
        const n = Number(input.artifact.split("-").at(-1));
        const r = { errorKind: "none" as const, times: [1e-3 * (1 + (n % 5))], runSeconds: 0.001 };
        onResult?.(i, r);
        out.push(r);
      }
      if (gate && k + 1 < gate.rounds) {
        // Generous, and only ever reached when the loop does not overlap.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const never = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`round ${k + 1} was not built while round ${k} was measured`)),
            60_000,
          );
        });
        try {
          await Promise.race([buildEnded(k + 2), never]);
        } finally {
          clearTimeout(timer);
        }
      }
      events.push(`measure ${k} end`);
      return out;
    },
    close: () => Promise.resolve(),
  };
  return { builder, runner };
}

function setup(db: RecordsDB) {
  const runId = db.startRun({
    strategy: "adaptive",
    seed: 1,
    trials: 20,
    target: "cpu",
    workloadId: db.upsertWorkload({
      name: workload.name,
      shape: workload.shape,
      flops: workload.flops,
    }),
    config: {},
    machine: {},
    compiler: "fake",
    tunebookVersion: "test",
  });
  return runId;
}

/** The native measurer over the fakes (a trace's `n` is its source). */
function measurerOf(f: { builder: Builder; runner: Runner }) {
  return createNativeMeasurer({
    workload,
    ...f,
    source: (t) => ({ source: String((t as unknown as { n: number }).n) }),
  });
}

function options(
  db: RecordsDB,
  runId: number,
  log: string[],
  events: string[],
  overlap: boolean,
  failAfter?: number,
  gate?: { rounds: number },
  runner?: (inner: Runner) => Runner,
): TuneOptions {
  const f = fakes(events, failAfter, gate);
  return {
    strategy: adaptiveStrategy(log),
    trials: 20,
    store: sqliteRecordStore(db, { close: false }),
    runId,
    measurer: measurerOf({ builder: f.builder, runner: runner ? runner(f.runner) : f.runner }),
    batchSize: 4,
    overlap,
  };
}

Deno.test("tune() with overlap builds round k+1 while round k is measured", async () => {
  const db = RecordsDB.open(":memory:");
  const events: string[] = [];
  // 20 trials in rounds of 4: five rounds, each but the last followed by another.
  const out = await tune(options(db, setup(db), [], events, true, undefined, { rounds: 5 }));
  assert.equal(out.measured, 20);
  assert.equal(out.stop, "trials");
  // Build k + 2 (round k + 1; build 0 is the reference) starts and ends while round k is measured.
  for (let k = 0; k < 4; k++) {
    const end = events.indexOf(`measure ${k} end`);
    assert.ok(events.indexOf(`measure ${k} start`) < events.indexOf(`build ${k + 2} start`));
    assert.ok(events.indexOf(`build ${k + 2} end`) < end, events.join("\n"));
  }
  assert.equal(db.counts(1).measured, 20);
  assert.ok(out.timings.measure > 0 && out.timings.wall > 0);
  db.close();
});

Deno.test("tune() without overlap measures each round before building the next", async () => {
  const db = RecordsDB.open(":memory:");
  const events: string[] = [];
  const log: string[] = [];
  const out = await tune(options(db, setup(db), log, events, false));
  assert.equal(out.measured, 20);
  // Build reference, then strictly: build k, measure k, observe k, propose k+1.
  for (let k = 0; k < 4; k++) {
    assert.ok(events.indexOf(`measure ${k} end`) < events.indexOf(`build ${k + 2} start`));
  }
  assert.match(log[0], /^propose/);
  assert.match(log[1], /^observe/);
  db.close();
});

Deno.test("tune() with race gives the measurer a cutoff of race times the best time so far", async () => {
  const db = RecordsDB.open(":memory:");
  const cutoffs: (number | undefined)[][] = [];
  const o = options(db, setup(db), [], [], false, undefined, undefined, (inner) => ({
    run(inputs, onResult) {
      cutoffs.push(inputs.map((i) => i.cutoffSeconds));
      return inner.run(inputs, onResult);
    },
    close: () => inner.close(),
  }));
  await tune({ ...o, race: 2 });
  // The first round knows no best; later ones cut at 2x the fastest time recorded (1 ms).
  assert.deepEqual(cutoffs[0], [undefined, undefined, undefined, undefined]);
  const later = cutoffs.slice(1).flat();
  assert.ok(later.length > 0);
  for (const c of later) assert.ok(c !== undefined && Math.abs(c - 2e-3) < 1e-9, `cutoff ${c}`);
  await assert.rejects(() => tune({ ...o, race: 0.5 }), /race must be a factor >= 1/);
  db.close();
});

for (const overlap of [false, true]) {
  Deno.test(`a killed run resumes to the calls of an uninterrupted one (overlap ${overlap})`, async () => {
    const whole: string[] = [];
    const db1 = RecordsDB.open(":memory:");
    await tune(options(db1, setup(db1), whole, [], overlap));
    const db2 = RecordsDB.open(":memory:");
    const runId = setup(db2);
    await assert.rejects(tune(options(db2, runId, [], [], overlap, 9)), /killed/);
    assert.equal(db2.counts(runId).measured, 9);
    const resumed: string[] = [];
    const out = await tune(options(db2, runId, resumed, [], overlap));
    assert.equal(out.measured, 20);
    assert.deepEqual(resumed, whole);
    const hashes = (db: RecordsDB) => [...db.measured(1).keys()].sort();
    assert.deepEqual(hashes(db2), hashes(db1));
    db1.close();
    db2.close();
  });
}

Deno.test("a transient result is not final: a resumed run measures it again and replaces it", async () => {
  const db = RecordsDB.open(":memory:");
  const runId = setup(db);
  const withLosses = (lose: boolean): TuneOptions =>
    options(db, runId, [], [], false, undefined, undefined, (inner) => ({
      run: (inputs, onResult) =>
        inner.run(inputs, (i, r) =>
          onResult?.(
            i,
            lose && i === 0
              ? {
                errorKind: "worker_lost",
                error: "killed by signal SIGKILL",
                times: [],
                runSeconds: 0,
              }
              : r,
          )),
      close: () => inner.close(),
    }));
  await tune(withLosses(true));
  const kinds = () => db.candidates(runId).map((c) => c.result?.errorKind);
  const lost = kinds().filter((k) => k === "worker_lost").length;
  assert.ok(lost > 1, `the first candidate of every round was lost: ${lost}`);
  assert.equal(kinds().filter((k) => k === "none").length, 20 - lost);
  const out = await tune(withLosses(false));
  assert.equal(out.measured, 20);
  assert.equal(db.candidates(runId).length, 20, "no candidate added twice");
  assert.deepEqual(kinds(), Array(20).fill("none"));
  db.close();
});
