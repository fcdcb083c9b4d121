/**
 * Tune a matmul on this CPU and plot the tuning curve.
 *
 * Run: `deno run -A examples/tune_matmul.ts [OUT_DIR]` (outside this repository, import
 * `<clone>/mod.ts` by path or file URL instead of "../mod.ts"). Writes `OUT_DIR/runs.db` (every
 * record) and `OUT_DIR/tune_matmul.svg` (best GFLOP/s so far against trials). Needs gcc.
 */
import { bestSoFar, RecordsDB, runSession, runTable, tuningCurveSVG } from "../mod.ts";

const out = Deno.args[0] ?? ".";
const trials = Number(Deno.env.get("TUNEBOOK_TRIALS") ?? 8);
const db = `${out}/runs.db`;

const summary = await runSession({
  db,
  workload: { name: "matmul", shape: [64, 64, 64] },
  strategy: "random",
  seed: 1,
  trials,
});
console.log(`best ${summary.best_gflops?.toFixed(2)} GFLOP/s after ${summary.trials} trials`);

const records = RecordsDB.open(db);
const table = runTable(records, summary.run_id);
records.close();
const perTrial = Array.from(table.array("gflops"), (g) => (g ?? NaN) as number);
const svg = tuningCurveSVG([{ label: "random", values: bestSoFar(perTrial) }], {
  title: `matmul 64: random search, ${trials} trials`,
});
await Deno.writeTextFile(`${out}/tune_matmul.svg`, svg);
console.log(`wrote ${out}/tune_matmul.svg`);
