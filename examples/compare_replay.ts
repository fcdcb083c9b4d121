/**
 * Compare strategies on a recorded space: Kernel Tuner's pnpoly cache of an RTX 3090, replayed (no
 * GPU needed), three strategies over a few seeds at small budgets, as a table and a band plot.
 *
 * Run: `deno run -A examples/compare_replay.ts [OUT_DIR]` (outside this repository, import
 * `<clone>/mod.ts` by path or file URL instead of "../mod.ts"). Writes `OUT_DIR/compare.svg`.
 */
import {
  bandCurveSVG,
  compareFrame,
  createStrategy,
  fractionBand,
  replaySpaceFromFile,
  runStrategy,
  type RunTrace,
} from "../mod.ts";

const out = Deno.args[0] ?? ".";
const strategies = ["random", "sa", "bo"];
const seeds = 3;
const budgets = [25, 50];

const replay = await replaySpaceFromFile("pnpoly_RTX_3090");
const runs = new Map<string, RunTrace[]>();
for (const name of strategies) {
  const list: RunTrace[] = [];
  for (let seed = 0; seed < seeds; seed++) {
    const strategy = await createStrategy(name, replay.space, {
      seed,
      candidateOf: replay.candidateOf,
    });
    list.push(await runStrategy(strategy, (cs) => replay.measure(cs), { budget: 50 }));
  }
  runs.set(name, list);
}

// Fraction of the optimum (best known time / best time found) per strategy and budget.
for (const row of compareFrame(runs, budgets, replay.optimum).objects()) {
  const r = row as { strategy: string; budget: number; mean_fraction: number };
  console.log(`${r.strategy.padEnd(8)} budget ${r.budget}: ${r.mean_fraction.toFixed(3)}`);
}

const evaluations = Array.from({ length: 50 }, (_, i) => i + 1);
const series = [...runs].map(([label, list]) => ({
  label,
  ...fractionBand(list, replay.optimum, evaluations),
}));
await Deno.writeTextFile(
  `${out}/compare.svg`,
  bandCurveSVG(series, { title: `${replay.name}: median and quartiles over ${seeds} seeds` }),
);
console.log(`wrote ${out}/compare.svg`);
