/**
 * Compare strategies on a recorded space: Kernel Tuner's pnpoly cache of an RTX 3090, replayed (no
 * GPU needed), three strategies over a few seeds at small budgets, as a table and a band plot.
 *
 * Run: `deno run -A examples/compare_replay.ts [OUT_DIR]` (outside this repository, import
 * `<clone>/mod.ts` by path or file URL instead of "../mod.ts"). Writes `OUT_DIR/compare.svg`.
 */
import { bandCurveSVG, compareStrategies, fractionBand, openSpace } from "../mod.ts";

const out = Deno.args[0] ?? ".";
const space = await openSpace("pnpoly_RTX_3090");
const c = await compareStrategies(space, ["random", "sa", "bo"], { budgets: [25, 50], seeds: 3 });

// Fraction of the optimum (best known time / best time found) per strategy and budget.
for (const r of c.rows) {
  console.log(`${r.strategy.padEnd(8)} budget ${r.budget}: ${r.mean_fraction.toFixed(3)}`);
}
console.log(`score (0 = random search, 1 = the optimum at once): ${JSON.stringify(c.scoreOf)}`);

const evaluations = Array.from({ length: 50 }, (_, i) => i + 1);
const series = [...c.traces].map(([label, runs]) => ({
  label,
  ...fractionBand(runs, c.optimum, evaluations),
}));
await Deno.writeTextFile(
  `${out}/compare.svg`,
  bandCurveSVG(series, { title: `${c.space}: median and quartiles over ${c.seeds.length} seeds` }),
);
console.log(`wrote ${out}/compare.svg`);
await space.close();
