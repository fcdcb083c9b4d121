import assert from "node:assert/strict";
import { depthwiseConv2d } from "../ir/nn.ts";
import { conv2d, matmul } from "../ir/workloads.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import type { Candidate } from "../ir/candidate.ts";
import type { Measurer } from "../measure/measurer.ts";
import { seededStrategy } from "../search/seeded.ts";
import type { Strategy } from "../search/strategy.ts";
import { createStrategy } from "./strategies.ts";
import { tune } from "./loop.ts";
import {
  defaultPerRound,
  defaultScheduleCandidate,
  taskStrategy,
  tuneNetwork,
} from "./network_tuning.ts";
import { templateSpace } from "../search/templates/registry.ts";
import type { Sample } from "../costmodel/model.ts";
import { RecordsDB } from "../datasets/db.ts";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

Deno.test("taskStrategy takes the first given template that schedules the task, else its default one", async () => {
  const c = conv2d(1, 8, 8, 8, 8, 3, 3, 1, 1);
  const name = async (s: string, w = c, templates?: string[]) =>
    (await taskStrategy(s, w, 1, templates)).name;
  assert.equal(await name("xgb", c, ["matmul-packed", "conv2d-packed"]), "xgb conv2d-packed");
  assert.equal(await name("ga"), "ga conv2d");
  assert.equal(await name("ga", matmul(8, 8, 8), ["conv2d-packed"]), "ga matmul");
  assert.equal(await name("ansor"), "ansor");
});

Deno.test("taskStrategy falls back to random on a workload no template schedules (depthwise)", async () => {
  const s = await taskStrategy("xgb", depthwiseConv2d(1, 8, 8, 8, 3, 3, 1, 1), 1, [
    "conv2d-packed",
  ]);
  assert.equal(s.name, "random");
  assert.equal(s.strategy.propose(2).length, 2);
});

Deno.test("defaultPerRound keeps the warm-up within an eighth of the budget, between 1 and 8 trials", () => {
  assert.equal(defaultPerRound(64, 12), 1);
  assert.equal(defaultPerRound(200, 12), 2);
  assert.equal(defaultPerRound(400, 12), 4);
  assert.equal(defaultPerRound(5, 12), 1);
  assert.equal(defaultPerRound(10_000, 3), 8);
});

Deno.test("every strategy of the network study runs seeded with the default schedule, measured first", async () => {
  const w = conv2d(1, 8, 8, 8, 8, 3, 3, 1, 1);
  // A fake measurer: the default schedule is the fastest, so it stays the best.
  const seconds = (c: Candidate) =>
    c.knobs
      ? 1e-3 * (2 + c.knobs.reduce((a, k) => a + k, 0) / 100)
      : c.trace!.insts.length === 0
      ? 1e-3
      : 1e-3 * (2 + JSON.stringify(c.trace).length % 97 / 100);
  const measurer: Measurer = {
    name: "fake",
    measure: (batch) =>
      Promise.resolve(batch.map((c) => ({
        errorKind: "none" as const,
        times: [seconds(c)],
        buildSeconds: 0,
        runSeconds: 0,
      }))),
  };
  for (const name of ["random", "xgb", "xgb-rank", "ga", "ppo", "dqn", "bandit", "ansor"]) {
    const { strategy } = await taskStrategy(name, w, 1, ["conv2d-packed"]);
    const seeded = seededStrategy(strategy, [defaultScheduleCandidate(w)]);
    const store = createMemoryRecordStore();
    const workloadId = await store.upsertWorkload({ name: w.name, shape: w.shape, flops: w.flops });
    const runId = await store.startRun({
      strategy: name,
      seed: 1,
      trials: 24,
      target: "fake",
      workloadId,
      config: {},
      machine: {},
      compiler: "",
      tunebookVersion: "0",
    });
    // 6 rounds of 4: past xgb's first plan of 16, so its model trains on what it observed.
    for (let round = 0; round < 6; round++) {
      await tune({
        strategy: seeded,
        measurer,
        store,
        runId,
        trials: 4,
        batchSize: 4,
        firstTrial: (await store.candidates(runId)).length,
      });
    }
    const rows = await store.candidates(runId);
    assert.equal(rows.length, 24, name);
    const first = rows.find((r) => r.trial === 0)!;
    assert.equal(JSON.parse(first.trace).insts.length, 0, name);
    assert.equal(first.knobs ?? null, null, name);
    assert.equal((await store.best(runId))?.result.seconds, 1e-3, name);
  }
});

Deno.test("a task's xgb model pretrained on other tasks' samples picks its first plan from them", async () => {
  const w = conv2d(1, 16, 14, 14, 32, 3, 3, 1, 1);
  const { space } = templateSpace("conv2d-nchwc", w);
  const at = (name: string) => space.knobs.findIndex((k) => k.name === name);
  const [order, unroll] = [at("order"), at("unroll_kw")];
  const fast = (knobs: number[]) => knobs[order] === 1 && knobs[unroll] === 1;
  // Another task's samples: a quarter of the space (order 1 with rx unrolled) is twice as fast.
  const pretrain: Sample[] = [];
  for (let i = 0; i < space.size && pretrain.length < 200; i += 7) {
    const knobs = space.point(i);
    if (!space.isValid(knobs)) continue;
    pretrain.push({ candidate: { knobs }, seconds: fast(knobs) ? 1e-3 : 2e-3, group: "other" });
  }
  const share = async (samples: Sample[]) => {
    const { strategy } = await taskStrategy("xgb", w, 3, ["conv2d-nchwc"], samples);
    const plan = strategy.propose(16);
    return plan.filter((c) => fast(c.knobs!)).length / plan.length;
  };
  // Without samples the first plan is random (about a quarter fast); with them, mostly fast.
  assert.ok(await share([]) < 0.5);
  assert.ok(await share(pretrain) >= 0.9);
});

Deno.test("tuneNetwork pretrains a task's model on this and earlier sessions' tasks whose knobs cover its own, unless told not to", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-transfer-" });
  try {
    const tasks = [
      { workload: conv2d(1, 4, 8, 8, 16, 3, 3, 1, 1), weight: 1, layers: ["l"] },
      { workload: conv2d(1, 8, 6, 6, 16, 3, 3, 1, 1), weight: 1, layers: ["l"] },
      // 1x1 without padding: no pad_parallel knob; it reads the padded tasks' samples.
      { workload: conv2d(1, 8, 6, 6, 16, 1, 1, 1, 0), weight: 1, layers: ["l"] },
    ];
    const session = async (db: string, transfer: boolean, recordsUpTo?: number) => {
      await tuneNetwork({
        recordsUpTo,
        tasks,
        db,
        trials: 6,
        perRound: 2,
        strategy: "xgb",
        templates: ["conv2d-nchwc"],
        scheduler: "round-robin",
        transfer,
        cacheDir: join(ROOT, ".cache/kernels"),
      });
      const r = RecordsDB.open(db);
      const given = r.runs().map((run) =>
        (run.config as { network: { transfer: unknown } }).network.transfer
      );
      r.close();
      return given;
    };
    const none = { samples: 0, tasks: 0, runs: 0 };
    // Each task's seeded default schedule plus one knob point: one sample per earlier task of its space.
    assert.deepEqual(await session(join(dir, "on.db"), true), [
      none,
      { samples: 1, tasks: 1, runs: 0 },
      { samples: 2, tasks: 2, runs: 0 },
    ]);
    assert.deepEqual(await session(join(dir, "off.db"), false), [none, none, none]);
    // A second session on the same records: every task also reads the first session's runs
    // (their configs record their knob spaces), its own included; the 1x1 task reads all three.
    const again = (await session(join(dir, "on.db"), true)).slice(3);
    assert.deepEqual(again, [
      { samples: 2, tasks: 0, runs: 2 },
      { samples: 3, tasks: 1, runs: 2 },
      { samples: 5, tasks: 2, runs: 3 },
    ]);
    // Sessions compared in one command read only the runs there before the first.
    const apart = (await session(join(dir, "on.db"), true, 0)).slice(6);
    assert.deepEqual(apart.map((t) => (t as { runs: number }).runs), [0, 0, 0]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a task of tuneNetwork takes STRATEGY@PRESET on its knob template; random@kt, which would search sketches, is refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "big.json");
    await Deno.writeTextFile(
      path,
      JSON.stringify({ strategy: "ga", hyper: { populationSize: 8 } }),
    );
    const w = conv2d(1, 8, 8, 8, 8, 3, 3, 1, 1);
    const s = await taskStrategy(`ga@${path}`, w, 1, ["conv2d-packed"]);
    assert.equal(s.name, `ga@${path} conv2d-packed`);
    // Three generations with made-up times: those of ga with populationSize 8, not of plain ga.
    const drive = async (st: Strategy) => {
      const seen: number[][] = [];
      for (let round = 0; round < 3; round++) {
        const cs = st.propose(8);
        await st.observe(cs.map((candidate) => ({
          candidate,
          errorKind: "none" as const,
          seconds: 1 + (candidate.knobs!.reduce((a, b) => a * 31 + b, 7) % 97),
        })));
        seen.push(...cs.map((c) => c.knobs!));
      }
      return seen;
    };
    const t = templateSpace("conv2d-packed", w);
    const byHand = await createStrategy("ga", t.space, {
      seed: 1,
      candidateOf: t.candidateOf,
      hyper: { populationSize: 8 },
    });
    const preset = await drive(s.strategy);
    assert.deepEqual(preset, await drive(byHand));
    assert.notDeepEqual(
      preset,
      await drive((await taskStrategy("ga", w, 1, ["conv2d-packed"])).strategy),
    );
    await assert.rejects(
      () => tuneNetwork({ tasks: [], db: join(dir, "n.db"), trials: 4, strategy: "random@kt" }),
      /random@kt: tune-network's random searches the sketches/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tuneNetwork compiles a round's kernels in one file by default, each alone with unity 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-net-unity-" });
  try {
    const tasks = [{ workload: matmul(8, 8, 8), weight: 1, layers: ["l"] }];
    const batches = async (unity: number | undefined) => {
      const cacheDir = join(dir, `kernels-${unity}`);
      const o = await tuneNetwork({
        tasks,
        db: join(dir, `${unity}.db`),
        trials: 4,
        perRound: 4,
        strategy: "random",
        scheduler: "round-robin",
        cacheDir,
        ...(unity !== undefined ? { unity } : {}),
      });
      assert.equal(o.tasks[0].trials, 4);
      return [...Deno.readDirSync(cacheDir)].filter((f) => /^batch-.*\.so$/.test(f.name)).length;
    };
    assert.ok(await batches(undefined) >= 1, "a unity build by default");
    assert.equal(await batches(1), 0, "unity 1: one shared object per kernel");
    await assert.rejects(
      () => tuneNetwork({ tasks, db: join(dir, "x.db"), trials: 1, strategy: "random", unity: 0 }),
      /unity/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
