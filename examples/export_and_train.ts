/**
 * Export a dataset and train a cost model on it: a replayed Kernel Tuner cache is imported into a
 * records database, exported as JSON Lines (the columns of docs/datasets.md), and XGBoost learns
 * log time from the knob vectors of 80% of the valid rows; Kendall's tau and the top-10 recall on
 * the other 20% say how well it ranks configurations it has not seen.
 *
 * Run: `deno run -A examples/export_and_train.ts [OUT_DIR]` (outside this repository, import
 * `<clone>/mod.ts` by path or file URL instead of "../mod.ts"). Needs libxgboost (Debian
 * libxgboost0). Writes `OUT_DIR/pnpoly.db` and `OUT_DIR/pnpoly.jsonl`.
 */
import { createPrng, exportRecords, RecordsDB, XGBoostRegressor } from "../mod.ts";
import { kendallTau, topKRecall } from "../costmodel/mod.ts";
import { importKernelTunerCache, KERNELTUNER_DIR } from "../datasets/mod.ts";

const out = Deno.args[0] ?? ".";
const db = RecordsDB.open(`${out}/pnpoly.db`);
await importKernelTunerCache(db, `${KERNELTUNER_DIR}/pnpoly_RTX_3090.json.gz`);
const summary = await exportRecords(db, "jsonl", `${out}/pnpoly.jsonl`);
db.close();
console.log(`exported ${summary.rows} rows to ${out}/pnpoly.jsonl`);

type Row = { knobs: string | null; error_kind: string; seconds: number | null };
const rows = (await Deno.readTextFile(`${out}/pnpoly.jsonl`)).trim().split("\n")
  .map((line) => JSON.parse(line) as Row)
  .filter((r) => r.error_kind === "none" && r.knobs !== null && r.seconds !== null)
  .map((r) => ({ knobs: JSON.parse(r.knobs!) as number[], seconds: r.seconds! }));

// A seeded 80/20 split of the rows (one workload here; across workloads use --holdout).
const prng = createPrng(1);
const order = rows.map((_, i) => i).sort(() => prng.next() - 0.5);
const cut = Math.floor(order.length * 0.8);
const train = order.slice(0, cut).map((i) => rows[i]), test = order.slice(cut).map((i) => rows[i]);
const matrix = (rs: typeof rows) => {
  const cols = rs[0].knobs.length;
  return { data: Float32Array.from(rs.flatMap((r) => r.knobs)), rows: rs.length, cols };
};
// Targets are throughputs (higher is faster), as the strategies' models use them.
const target = (rs: typeof rows) => Float32Array.from(rs, (r) => -Math.log(r.seconds));

const model = new XGBoostRegressor();
model.fit(matrix(train), target(train));
const predicted = Array.from(model.predict(matrix(test)));
model.dispose();
const truth = Array.from(target(test));
console.log(`trained on ${train.length} rows, tested on ${test.length}`);
console.log(`Kendall tau ${kendallTau(predicted, truth).toFixed(3)}`);
console.log(`top-10 recall ${topKRecall(predicted, truth, 10).toFixed(3)}`);
