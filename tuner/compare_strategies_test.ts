import assert from "node:assert/strict";
import { openSpace } from "./open_space.ts";
import { compareStrategies } from "./compare_strategies.ts";
import { createStrategy } from "./strategies.ts";
import { runStrategy } from "./run_strategy.ts";
import { compareRows } from "../search/comparison.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import { writePreset } from "./presets.ts";
import { join } from "node:path";

Deno.test("compareStrategies gives the figures of the runs made one by one", async () => {
  const space = await openSpace("pnpoly_RTX_3090");
  const events: string[] = [];
  const c = await compareStrategies(space, ["random", "sa"], {
    budgets: [20, 10],
    seeds: 2,
    onRun: (e) => events.push(`${e.strategy}/${e.seed} ${e.done}/${e.total}`),
  });
  assert.deepEqual(events, ["random/0 1/4", "random/1 2/4", "sa/0 3/4", "sa/1 4/4"]);
  assert.deepEqual(c.budgets, [10, 20]);
  const byHand = new Map();
  for (const name of ["random", "sa"]) {
    const list = [];
    for (const seed of [0, 1]) {
      const s = await createStrategy(name, space.space, { seed, candidateOf: space.candidateOf });
      list.push(await runStrategy(s, space.measurer, { budget: 20 }));
    }
    byHand.set(name, list);
  }
  assert.deepEqual(
    c.rows.map(({ wall_seconds: _, ...r }) => r),
    compareRows(byHand, [10, 20], space.optimum!).map(({ wall_seconds: _, ...r }) => r),
  );
  assert.equal(c.results.numRows(), 4);
  assert.equal(c.runs.numRows(), 2 * 2 * 20);
  assert.deepEqual(c.scores.array("strategy"), ["random", "sa"]);
  assert.ok(c.exactRandom && typeof c.scoreOf.sa === "number");
  assert.equal(c.reach.numRows(), 2);
});

Deno.test("compareStrategies takes a factory, keeps records in db and resumes finished runs", async () => {
  const space = await openSpace("pnpoly_RTX_3090");
  const db = createMemoryRecordStore();
  let made = 0;
  const mine = {
    name: "mine",
    create: (sp: typeof space.space, ctx: { seed: number }) => {
      made++;
      return createStrategy("random", sp, { seed: ctx.seed });
    },
  };
  const first = await compareStrategies(space, [mine], { budgets: [5], seeds: [3], db });
  assert.equal(made, 1);
  assert.equal((await db.runs()).length, 1);
  assert.equal((await db.runs())[0].seed, 3);
  const again = await compareStrategies(space, [mine], {
    budgets: [5],
    seeds: [3],
    db,
    resume: true,
  });
  assert.equal(made, 1, "the finished run is read back, not run again");
  assert.deepEqual(again.traces.get("mine")![0].best, first.traces.get("mine")![0].best);
});

Deno.test("compareStrategies names a bad option and what it got", async () => {
  const space = await openSpace("pnpoly_RTX_3090");
  const o = { budgets: [5], seeds: 1 };
  await assert.rejects(() => compareStrategies(space, ["magic"], o), /unknown strategy "magic"/);
  await assert.rejects(() => compareStrategies(space, [], o), /strategies must be a non-empty/);
  await assert.rejects(
    () => compareStrategies(space, ["sa"], { budgets: [0], seeds: 1 }),
    /budgets must be positive integers, got 0/,
  );
  await assert.rejects(
    () => compareStrategies(space, ["sa"], { budgets: [5], seeds: 0 }),
    /seeds must be a positive integer or a list of seeds, got 0/,
  );
  await assert.rejects(
    () => compareStrategies(space, ["sa"], { budgets: [1e9], seeds: 1 }),
    /budgets: 1000000000 is more than the \d+ configurations/,
  );
  const clipped = await compareStrategies(space, ["random"], {
    budgets: [3, 1e9],
    seeds: 1,
    clip: true,
  });
  assert.deepEqual(clipped.budgets, [3, space.space.size]);
  await assert.rejects(
    () => compareStrategies({} as typeof space, ["sa"], o),
    /space must be an opened space/,
  );
});

Deno.test("compareStrategies runs STRATEGY@PRESET with its settings, records them and resumes only the same settings", async () => {
  const space = await openSpace("pnpoly_RTX_3090");
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "short.json");
    await writePreset({ name: "short", strategy: "random", hyper: { fraction: 0.05 } }, path);
    const name = `random@${path}`;
    const db = createMemoryRecordStore();
    const o = { budgets: [Math.ceil(0.2 * space.space.size)], seeds: 1, db };
    const c = await compareStrategies(space, ["random", name], o);
    assert.deepEqual(Object.keys(c.scoreOf), ["random", name]);
    const evals = (n: string) => c.traces.get(n)![0].evals;
    assert.ok(evals(name) < evals("random"), `${evals(name)} against ${evals("random")}`);
    const runs = await db.runs();
    assert.deepEqual(runs.map((r) => r.strategy), ["random", name]);
    assert.equal(runs[0].config.hyper, undefined);
    assert.deepEqual(runs[1].config.hyper, { fraction: 0.05 });
    // Resumed with the same preset: read back; with the file changed: a new run.
    await compareStrategies(space, [name], { ...o, resume: true });
    assert.equal((await db.runs()).length, 2);
    await writePreset({ name: "short", strategy: "random", hyper: { fraction: 0.1 } }, path);
    await compareStrategies(space, [name], { ...o, resume: true });
    const after = await db.runs();
    assert.equal(after.length, 3);
    assert.deepEqual(after[2].config.hyper, { fraction: 0.1 });
    await assert.rejects(
      () => compareStrategies(space, ["sa@nothing-here"], o),
      /strategies: sa@nothing-here: Preset "nothing-here" of sa@nothing-here: no file/,
    );
  } finally {
    await space.close();
    await Deno.remove(dir, { recursive: true });
  }
});
