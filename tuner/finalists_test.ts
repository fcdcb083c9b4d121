import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RecordsDB } from "../datasets/db.ts";
import type { Candidate } from "../ir/candidate.ts";
import { conv2d, matmul } from "../ir/workloads.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { traceOf } from "../ir/trace.ts";
import type { Measurer } from "../measure/measurer.ts";
import {
  confirmedBest,
  fastestDistinct,
  FINALISTS_STRATEGY,
  finalistsOf,
  recordFinalists,
  retimeFinalists,
} from "./finalists.ts";
import { tuneNetwork } from "./network_tuning.ts";
import { warmStart } from "./task_scheduler.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const W = matmul(8, 8, 8);
const IDS = ["x", "y", "z", "w", "bad", "lucky", "steady", "slow", "crashes"];
/** A valid trace of its own per id (i and j split by different factors); its knobs say which it is. */
const traceOf_ = (id: string) => {
  const k = IDS.indexOf(id);
  const sch = new Schedule(W, { prng: createPrng(0) });
  sch.split("C", "i", [null, 2 ** (k % 4)]);
  sch.split("C", "j", [null, 2 ** Math.floor(k / 4)]);
  return JSON.stringify(traceOf(sch));
};
const knobsOf = (id: string) => [IDS.indexOf(id)];
const idOf = (f: { knobs?: number[] | null }) => IDS[f.knobs![0]];

/** A tuning run of W with one record per [id, seconds] (null seconds: a wrong answer). */
function tuningRun(db: RecordsDB, records: [string, number | null][]): number {
  const run = db.startRun({
    strategy: "random",
    seed: 1,
    trials: records.length,
    target: "cpu",
    workloadId: db.upsertWorkload({ name: W.name, shape: W.shape, flops: W.flops }),
    config: {},
    machine: {},
    compiler: "gcc",
    tunebookVersion: "test",
  });
  records.forEach(([id, s], trial) => {
    const c = db.addCandidate(run, {
      trial,
      trace: traceOf_(id),
      traceHash: id,
      knobs: knobsOf(id),
    });
    db.addResult(
      c,
      s === null
        ? { errorKind: "wrong_answer", times: [], buildSeconds: 0, runSeconds: 0 }
        : { errorKind: "none", times: [s], buildSeconds: 0, runSeconds: 0 },
    );
  });
  db.finishRun(run);
  return run;
}

/** A measurer answering from a table of seconds per trace id and round; records the order of each batch. */
function tableMeasurer(table: Record<string, number[]>, batches: string[][]): Measurer {
  const round = new Map<string, number>();
  return {
    name: "table",
    measure: (batch: readonly Candidate[]) => {
      const ids = batch.map(idOf);
      batches.push(ids);
      return Promise.resolve(ids.map((id) => {
        const r = round.get(id) ?? 0;
        round.set(id, r + 1);
        const s = table[id][r];
        return Number.isFinite(s)
          ? {
            errorKind: "none" as const,
            times: [s, s * 1.01, s * 0.99],
            buildSeconds: 0,
            runSeconds: 0,
          }
          : {
            errorKind: "runtime_crash" as const,
            error: "SIGSEGV",
            times: [],
            buildSeconds: 0,
            runSeconds: 0,
          };
      }));
    },
  };
}

Deno.test("finalistsOf takes the fastest distinct valid traces over the runs asked, fastest first", () => {
  const db = RecordsDB.open(":memory:", { mode: "create" });
  const a = tuningRun(db, [["x", 3e-3], ["y", 1e-3], ["bad", null]]);
  const b = tuningRun(db, [["y", 2e-3], ["z", 1.5e-3], ["w", 9e-3]]);
  const all = finalistsOf(db, W, 3);
  assert.deepEqual(all.map(idOf), ["y", "z", "x"]);
  assert.equal(all[0].seconds, 1e-3, "a trace recorded twice counts at its fastest");
  assert.deepEqual(finalistsOf(db, W, 5, { runs: [b] }).map(idOf), [
    "z",
    "y",
    "w",
  ]);
  assert.equal(finalistsOf(db, W, 5, { runs: [a] }).length, 2);
  assert.equal(finalistsOf(db, matmul(4, 4, 4), 5).length, 0);
  db.close();
});

Deno.test("fastestDistinct takes a second look at a trace timed while the machine ran slow", () => {
  const c = (id: string, ms: number, probeGBps?: number) => ({
    trace: traceOf_(id),
    knobs: knobsOf(id),
    result: {
      errorKind: "none",
      seconds: ms * 1e-3,
      ...(probeGBps !== undefined ? { conditions: { probeGBps } } : {}),
    },
  });
  // The usual speed is 40; "z" (1.5 ms) and "w" (3 ms) were timed at half of it.
  const all = [c("x", 1, 40), c("y", 1.2, 40), c("z", 1.5, 20), c("w", 3, 20), c("lucky", 2, 40)];
  const picked = fastestDistinct(all, 2);
  assert.deepEqual(picked.map(idOf), ["x", "y", "z"]);
  assert.equal(picked[2].timedSlowAt, 0.5);
  assert.equal(picked[2].seconds, 1.5e-3, "the recorded figure, not the scaled one");
  assert.equal("timedSlowAt" in picked[0], false);
  assert.equal("probe" in picked[0], false);
  // At half speed, 3 ms would have been 1.5: slower than the last finalist, no second look.
  assert.deepEqual(fastestDistinct(all, 3).map(idOf), ["x", "y", "z"]);
  // No probes, no second looks; fewer candidates than asked, none either.
  assert.deepEqual(
    fastestDistinct(
      all.map(({ trace, knobs, result }) => ({
        trace,
        knobs,
        result: { errorKind: result.errorKind, seconds: result.seconds },
      })),
      2,
    ).map(idOf),
    ["x", "y"],
  );
  assert.deepEqual(fastestDistinct(all, 9).map(idOf), ["x", "y", "z", "lucky", "w"]);
});

Deno.test("retimeFinalists keeps the fastest over the rounds, not the luckiest, rotating the order", async () => {
  const batches: string[][] = [];
  const m = tableMeasurer({
    lucky: [1e-3, 3e-3, 3e-3, 3e-3],
    steady: [2e-3, 2e-3, 2e-3, 2e-3],
    crashes: [1.5e-3, NaN, 1e-3, 1e-3],
  }, batches);
  const rounds: number[] = [];
  const r = await retimeFinalists(
    ["lucky", "steady", "crashes"].map((id) => ({
      trace: traceOf_(id),
      knobs: knobsOf(id),
      seconds: 1e-3,
    })),
    m,
    4,
    (n) => rounds.push(n),
  );
  assert.deepEqual(r.map(idOf), ["steady", "lucky", "crashes"]);
  assert.deepEqual(r[0].times, [2e-3, 2e-3, 2e-3, 2e-3]);
  assert.equal(r[0].medianSeconds, 2e-3);
  assert.equal(r[1].medianSeconds, 3e-3);
  // The finalist that crashed in round 2 is out: not timed again, no time.
  assert.equal(r[2].errorKind, "runtime_crash");
  assert.equal(r[2].medianSeconds, Infinity);
  assert.deepEqual(batches, [
    ["lucky", "steady", "crashes"],
    ["steady", "crashes", "lucky"],
    ["lucky", "steady"],
    ["lucky", "steady"],
  ]);
  assert.deepEqual(rounds, [1, 2, 3, 4]);
});

Deno.test("the newest finalists run gives a workload's best; its re-timings are not trials", async () => {
  const db = RecordsDB.open(":memory:", { mode: "create" });
  const run = tuningRun(db, [["lucky", 1e-3], ["steady", 1.2e-3], ["slow", 5e-3]]);
  assert.deepEqual(confirmedBest(db, W), {
    trials: 3,
    seconds: 1e-3,
    trace: traceOf_("lucky"),
    confirmed: false,
  });
  const retimed = await retimeFinalists(
    finalistsOf(db, W, 2),
    tableMeasurer({ lucky: [3e-3, 3e-3, 3e-3], steady: [2e-3, 2e-3, 2.1e-3] }, []),
    3,
  );
  const id = await recordFinalists(db, W, retimed, {
    rounds: 3,
    from: [run],
    machine: {},
    compiler: "gcc",
    tunebookVersion: "test",
  });
  const r = db.run(id)!;
  assert.equal(r.strategy, FINALISTS_STRATEGY);
  assert.deepEqual((r.config as { finalists: unknown }).finalists, {
    count: 2,
    rounds: 3,
    from: [run],
  });
  assert.deepEqual(db.candidates(id).map((c) => c.result?.times.length), [3, 3]);
  assert.deepEqual(confirmedBest(db, W), {
    trials: 3,
    seconds: 2e-3,
    trace: traceOf_("steady"),
    confirmed: true,
  });
  assert.deepEqual(db.best(id)!.knobs, knobsOf("steady"));
  assert.deepEqual(warmStart(db, [W]), [{
    trials: 3,
    bestSeconds: 2e-3,
    bestTrace: traceOf_("steady"),
  }]);
  // A run read up to an id before the finalists: the record as tuned.
  assert.equal(confirmedBest(db, W, { upTo: run }).seconds, 1e-3);
  db.close();
});

Deno.test("a finalist keeps the worst conditions of its rounds, and its record holds them", async () => {
  const db = RecordsDB.open(":memory:", { mode: "create" });
  tuningRun(db, [["lucky", 1e-3], ["steady", 1.2e-3]]);
  const inner = tableMeasurer({ lucky: [3e-3, 3e-3, 3e-3], steady: [2e-3, 2e-3, 2e-3] }, []);
  // Round by round: the load rises, then falls; the frequency dips in round 2; steal only in round 3.
  const conditions = [{ load1: 0.5, cpuMhz: 2600 }, { load1: 2.5, cpuMhz: 2000 }, {
    load1: 1,
    steal: 0.02,
  }];
  let round = 0;
  const measurer: Measurer = {
    name: "with conditions",
    measure: async (batch) => {
      const c = conditions[round++];
      return (await inner.measure(batch)).map((r) => ({ ...r, conditions: c }));
    },
  };
  const retimed = await retimeFinalists(finalistsOf(db, W, 2), measurer, 3);
  for (const f of retimed) {
    assert.deepEqual(f.conditions, { load1: 2.5, cpuMhz: 2000, steal: 0.02 });
  }
  const id = await recordFinalists(db, W, retimed, {
    rounds: 3,
    from: [],
    machine: {},
    compiler: "gcc",
    tunebookVersion: "test",
  });
  assert.deepEqual(db.best(id)!.result.conditions, { load1: 2.5, steal: 0.02, cpuMhz: 2000 });
  // Without conditions from the measurer, none are invented.
  const plain = await retimeFinalists(finalistsOf(db, W, 1), inner, 1);
  assert.equal(plain[0].conditions, undefined);
  db.close();
});

Deno.test("finalists re-timed again over a database holding the first re-timing time each trace once", async () => {
  const db = RecordsDB.open(":memory:", { mode: "create" });
  const run = tuningRun(db, [["lucky", 1e-3], ["steady", 1.2e-3], ["slow", 5e-3]]);
  const info = { rounds: 1, from: [run], machine: {}, compiler: "gcc", tunebookVersion: "test" };
  const table = { lucky: [3e-3, 3e-3], steady: [2e-3, 2e-3], slow: [4e-3, 4e-3] };
  const m = tableMeasurer(table, []);
  await recordFinalists(db, W, await retimeFinalists(finalistsOf(db, W, 3), m, 1), info);
  // Every trace is now in two runs (as tuned and as re-timed): still three finalists.
  const again = finalistsOf(db, W, 8);
  assert.deepEqual(again.map(idOf), ["lucky", "steady", "slow"]);
  const second = await recordFinalists(db, W, await retimeFinalists(again, m, 1), info);
  assert.equal(db.candidates(second).length, 3);
  // The re-timing keys its candidates as tuning does, so a trace has one key in every run.
  const keys = new Set(db.candidates(second).map((c) => c.traceHash));
  assert.equal(keys.size, 3);
  db.close();
});

Deno.test("tuneNetwork re-times each task's finalists and runs the fastest over the rounds", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-finalists-" });
  try {
    const tasks = [
      { workload: conv2d(1, 4, 8, 8, 16, 3, 3, 1, 1), weight: 2, layers: ["a", "b"] },
      { workload: conv2d(1, 8, 6, 6, 16, 1, 1, 1, 0), weight: 1, layers: ["c"] },
    ];
    const db = join(dir, "f.db");
    const seen: number[] = [];
    const o = await tuneNetwork({
      tasks,
      db,
      trials: 8,
      perRound: 2,
      strategy: "random",
      templates: ["conv2d-nchwc"],
      scheduler: "round-robin",
      cacheDir: join(ROOT, ".cache/kernels"),
      finalists: { top: 2, rounds: 2 },
      onFinalists: (i) => seen.push(i),
    });
    assert.deepEqual(seen, [0, 1]);
    const r = RecordsDB.open(db);
    try {
      for (const [i, t] of o.tasks.entries()) {
        assert.ok(t.finalists, `task ${i} re-timed`);
        // The 2 fastest, and up to 2 second looks at trials the speed probe saw timed in a
        // slow spell (fastestDistinct): how many depends on the machine's spells, not the code.
        assert.ok(t.finalists.count >= 2 && t.finalists.count <= 4, `${t.finalists.count}`);
        assert.equal(r.candidates(t.finalists.runId).length, t.finalists.count);
        const run = r.run(t.finalists.runId)!;
        assert.equal(run.strategy, FINALISTS_STRATEGY);
        assert.deepEqual((run.config as { finalists: { from: number[] } }).finalists.from, [
          t.runId,
        ]);
        const best = r.best(t.finalists.runId)!;
        assert.equal(best.trace, t.bestTrace);
        assert.equal(best.result.seconds, t.bestSeconds);
        assert.equal(best.result.times.length, 2);
        // The rounds' conditions are recorded with the finalists, and their ranking's noise decided.
        assert.ok(Number.isFinite(best.result.conditions?.load1), JSON.stringify(best.result));
        assert.equal(typeof t.finalists.noise?.uncertain, "boolean");
        assert.equal(t.finalists.noise?.best.seconds, t.bestSeconds);
      }
      const sum = o.tasks.reduce((a, t) => a + t.weight * t.bestSeconds!, 0);
      assert.equal(o.finalistsObjectiveSeconds, sum);
      // The next session's warm start reads the finalists, and counts only the tuning trials.
      const warm = warmStart(r, tasks.map((t) => t.workload));
      assert.deepEqual(warm.map((s) => s.bestTrace), o.tasks.map((t) => t.bestTrace));
      assert.deepEqual(warm.map((s) => s.trials), o.tasks.map((t) => t.trials));
    } finally {
      r.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
