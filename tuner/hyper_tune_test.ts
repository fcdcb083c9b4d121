import assert from "node:assert/strict";
import { join } from "node:path";
import { checkHyper, STRATEGIES } from "./strategies.ts";
import { hyperSpace, tuneStrategy } from "./hyper_tune.ts";
import { parseStrategyName, readPreset, writePreset } from "./presets.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";

Deno.test("declared hyperparameters: defaults among their values, misuse refused by name", () => {
  for (const [name, e] of Object.entries(STRATEGIES)) {
    for (const h of e.hyper ?? []) {
      assert.ok(h.values.includes(h.default), `${name}.${h.name}: default not among its values`);
      assert.ok(h.values.length >= 2, `${name}.${h.name}: nothing to search`);
    }
  }
  checkHyper("sa", { alpha: 0.99, t0: 1.5 });
  assert.throws(
    () => checkHyper("sa", { popsize: 3 }),
    /no hyperparameter "popsize"; declared: t0/,
  );
  assert.throws(
    () => checkHyper("ga", { eliteNum: 2 }),
    /ga\.eliteNum must be one of 1, 3, 6, got 2/,
  );
  assert.throws(() => hyperSpace("grid"), /declares no hyperparameters/);
  assert.equal(hyperSpace("pso").space.size, 4 * 3 * 3 * 3);
});

Deno.test("presets: built-in, written and read back, checked against the table", async () => {
  assert.deepEqual(parseStrategyName("sa@x"), { strategy: "sa", preset: "x" });
  assert.deepEqual((await readPreset("random@kt")).hyper, { fraction: 0.1 });
  const dir = await Deno.makeTempDir();
  try {
    const path = await writePreset(
      { name: "fast", strategy: "sa", hyper: { alpha: 0.99 } },
      join(dir, "fast.json"),
    );
    assert.deepEqual((await readPreset(`sa@${path}`)).hyper, { alpha: 0.99 });
    assert.deepEqual((await readPreset("sa@fast", dir)).hyper, { alpha: 0.99 });
    await assert.rejects(() => readPreset(`ga@${path}`), /sets strategy "sa", not ga/);
    await assert.rejects(() => readPreset("sa@missing", dir), /no file/);
    await Deno.writeTextFile(
      join(dir, "bad.json"),
      JSON.stringify({ strategy: "sa", hyper: { alpha: 2 } }),
    );
    await assert.rejects(() => readPreset("sa@bad", dir), /sa\.alpha must be one of/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tuneStrategy judges each fold's winner on the space left out, and reuses runs", async () => {
  const r = await tuneStrategy({
    strategy: "ga",
    spaces: ["convolution_MI250X", "pnpoly_RTX_3090"],
    metaBudget: 3,
    seeds: 2,
  });
  assert.equal(r.folds.length, 2);
  assert.deepEqual(r.folds.map((f) => f.heldOut), ["convolution_MI250X", "pnpoly_RTX_3090"]);
  for (const f of r.folds) checkHyper("ga", f.hyper);
  checkHyper("ga", r.hyper);
  const mean = (r.folds[0].heldOutScore + r.folds[1].heldOutScore) / 2;
  assert.ok(Math.abs(r.leaveOneOutScore! - mean) < 1e-12);
  // The same random meta-seed proposes the same settings in every fold: pairs are shared.
  assert.ok(r.pairs <= 2 * (3 + 1), `${r.pairs} pairs`);
  await assert.rejects(
    () => tuneStrategy({ strategy: "ga", spaces: ["pnpoly_RTX_3090"] }),
    /leave-one-space-out needs at least 2 spaces/,
  );
});

Deno.test("tuneStrategy stopped after some settings resumes from its records to the same preset", async () => {
  const o = {
    strategy: "sa",
    spaces: ["convolution_MI250X", "pnpoly_RTX_3090"],
    metaBudget: 3,
    seeds: 2,
  };
  const whole = await tuneStrategy(o);
  const db = createMemoryRecordStore();
  let lines = 0;
  // A crash after 3 (setting, space) pairs: their 6 runs are recorded and finished.
  await assert.rejects(
    () =>
      tuneStrategy({
        ...o,
        db,
        onProgress: () => {
          if (++lines === 3) throw new Error("killed");
        },
      }),
    /killed/,
  );
  const runs = await db.runs();
  assert.ok(runs.length >= 6 && runs.every((r) => r.strategy === "sa"), `${runs.length} runs`);
  assert.deepEqual([...new Set(runs.map((r) => r.seed))], [0, 1]);
  // Fold 1 holds convolution_MI250X out: it trains on pnpoly_RTX_3090 first.
  assert.equal(runs[0].config.hyperTune, "pnpoly_RTX_3090");
  assert.equal(runs[0].config.strategyTime, false);
  checkHyper("sa", runs[0].config.hyper as Record<string, number>);
  const again = await tuneStrategy({ ...o, db, resume: true });
  assert.equal(again.resumed, 6);
  assert.deepEqual(again.seeds, [0, 1]);
  const { seconds: _a, resumed: _b, ...same } = whole;
  const { seconds: _c, resumed: _d, ...resumed } = again;
  assert.deepEqual(resumed, same);
  // Everything recorded now: a second resume runs nothing.
  assert.equal((await tuneStrategy({ ...o, db, resume: true })).resumed, 2 * again.pairs);
  await assert.rejects(() => tuneStrategy({ ...o, resume: true }), /resume needs db/);
  await assert.rejects(
    () => tuneStrategy({ ...o, strategy: "sa@kt" }),
    /Preset "kt" of sa@kt|searches every setting/,
  );
});

Deno.test("any knob strategy of the table, or one with a preset, searches the settings as the meta-strategy", async () => {
  const metas = ["random", "random@kt", "grid", "sa", "ga", "pso", "diff_evo", "greedy_ils", "bo"];
  for (const meta of metas) {
    const r = await tuneStrategy({
      strategy: "diff_evo",
      spaces: ["convolution_MI250X", "pnpoly_RTX_3090"],
      meta,
      metaBudget: 3,
      seeds: 1,
      folds: false,
    });
    assert.equal(r.meta, meta);
    checkHyper("diff_evo", r.hyper);
    assert.ok(r.pairs >= 2 && r.pairs <= 2 * 4, `${meta}: ${r.pairs} pairs`);
  }
});
