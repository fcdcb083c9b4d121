/**
 * Fair comparison of strategies on one space: every strategy runs with every
 * seed against the same evaluator (`runStrategy` of `tuner/run_strategy.ts`,
 * through the tuning loop); a budget counts distinct configurations
 * evaluated (invalid ones included) and re-proposing one costs nothing.
 * Strategies do not know the budget, so the result at budget b is the first
 * b evaluations of one run per seed (identical to a separate run with that
 * budget and seed, since every strategy is deterministic given its seed).
 * This module tabulates the runs.
 *
 * The score is the fraction of optimum: best known time / best time found
 * (0 when nothing valid was found), as in Kernel Tuner's strategy studies.
 * @module
 */
import type { KnobSpace, Point } from "../ir/knobs.ts";
import type { Candidate, Observation } from "./strategy.ts";
import type { RankRow } from "./score.ts";
import { mean, summary } from "../ir/stats.ts";
import { checkInteger, checkNumber, described } from "../ir/check.ts";

/** Quartiles and mean of a list (ir/stats.ts, the one statistics module). */
export { summary };

/** Measures candidates (a replay lookup or real kernels). */
export type Evaluator = (candidates: Candidate[]) => Promise<Observation[]> | Observation[];

/** One strategy run: the best time after each distinct evaluation. */
export interface RunTrace {
  /** Best seconds after evaluation i (Infinity before the first valid one). */
  best: number[];
  /** Wall seconds after evaluation i. */
  wall: number[];
  /** Distinct evaluations made (below the budget when the strategy ran out). */
  evals: number;
}

/** One row of a comparison. */
export interface CompareRow {
  /** Strategy name. */
  strategy: string;
  /** Evaluations allowed. */
  budget: number;
  /** Seeds (runs) summarized. */
  seeds: number;
  /** Mean fraction of optimum over the seeds (best known time / best found; 0 when none valid). */
  mean_fraction: number;
  /** Median fraction of optimum over the seeds. */
  median_fraction: number;
  /** 25th percentile of the fraction of optimum. */
  p25: number;
  /** 75th percentile of the fraction of optimum. */
  p75: number;
  /** Mean evaluations used (below the budget when a strategy ran out). */
  mean_evals: number;
  /** Mean wall seconds to reach the budget (or the end of the run). */
  wall_seconds: number;
}

/** Fraction of optimum after `b` evaluations of a run. */
export function fractionAt(run: RunTrace, b: number, optimum: number): number {
  const n = Math.min(b, run.best.length);
  const best = n === 0 ? Infinity : run.best[n - 1];
  return Number.isFinite(best) ? optimum / best : 0;
}

/** Rows of a comparison from the runs of each strategy (one per seed). */
export function compareRows(
  runs: Map<string, RunTrace[]>,
  budgets: number[],
  optimum: number,
): CompareRow[] {
  const rows: CompareRow[] = [];
  for (const [strategy, list] of runs) {
    for (const b of budgets) {
      const f = summary(list.map((r) => fractionAt(r, b, optimum)));
      const evals = list.map((r) => Math.min(b, r.evals));
      const wall = list.map((r) => r.wall[Math.min(b, r.wall.length) - 1] ?? 0);
      rows.push({
        strategy,
        budget: b,
        seeds: list.length,
        mean_fraction: f.mean,
        median_fraction: f.median,
        p25: f.p25,
        p75: f.p75,
        mean_evals: mean(evals),
        wall_seconds: mean(wall),
      });
    }
  }
  return rows;
}

/** Renders rows as a Markdown table. */
export function compareTable(rows: CompareRow[]): string {
  const head = "| strategy | budget | mean | median | p25 | p75 | mean evals | wall s |\n" +
    "| --- | --- | --- | --- | --- | --- | --- | --- |";
  return [
    head,
    ...rows.map((r) =>
      `| ${r.strategy} | ${r.budget} | ${r.mean_fraction.toFixed(3)} | ${
        r.median_fraction.toFixed(3)
      } | ${r.p25.toFixed(3)} | ${r.p75.toFixed(3)} | ${r.mean_evals.toFixed(1)} | ${
        r.wall_seconds.toFixed(3)
      } |`
    ),
  ].join("\n");
}

/** Key of a knob point. */
export function pointKey(space: KnobSpace, p: Point): string {
  return String(space.index(p));
}

/**
 * Evaluations a run needed to reach `fraction` of the optimum (its best time
 * at most optimum / fraction), or undefined when it never did.
 */
export function samplesToReach(
  run: RunTrace,
  optimum: number,
  fraction = 0.95,
): number | undefined {
  const limit = optimum / fraction;
  const i = run.best.findIndex((b) => b <= limit * (1 + 1e-12));
  return i < 0 ? undefined : i + 1;
}

/** Per strategy: how many evaluations runs needed to reach a fraction of the optimum. */
export interface ReachRow {
  /** The strategy's name. */
  strategy: string;
  /** The fraction of optimum aimed at, e.g. 0.95. */
  fraction: number;
  /** Seeds (runs) of the strategy. */
  seeds: number;
  /** Seeds whose run reached it within its evaluations. */
  reached: number;
  /** Median evaluations to reach it over all seeds, a seed that never did counting as Infinity. */
  median_samples: number;
  /** First quartile of the same. */
  p25: number;
  /** Third quartile of the same. */
  p75: number;
}

/** {@link ReachRow}s of each strategy's runs (one run per seed). */
export function reachRows(
  runs: Map<string, RunTrace[]>,
  optimum: number,
  fraction = 0.95,
): ReachRow[] {
  return [...runs].map(([strategy, list]) => {
    const n = list.map((r) => samplesToReach(r, optimum, fraction) ?? Infinity);
    const f = summary(n);
    return {
      strategy,
      fraction,
      seeds: list.length,
      reached: n.filter(Number.isFinite).length,
      median_samples: f.median,
      p25: f.p25,
      p75: f.p75,
    };
  });
}

/** Renders {@link ReachRow}s as a Markdown table ("never" for a quantile over seeds that never reached it). */
export function reachTable(rows: ReachRow[]): string {
  const cell = (x: number) => Number.isFinite(x) ? String(Math.round(x)) : "never";
  const pct = rows.length ? Math.round(rows[0].fraction * 100) : 95;
  return [
    `| strategy | seeds reaching ${pct}% | median samples to ${pct}% | p25 | p75 |`,
    "| --- | --- | --- | --- | --- |",
    ...rows.map((r) =>
      `| ${r.strategy} | ${r.reached}/${r.seeds} | ${cell(r.median_samples)} | ${cell(r.p25)} | ${
        cell(r.p75)
      } |`
    ),
  ].join("\n");
}

/** Median and quartiles of the fraction of optimum of a strategy's runs on a grid of x values. */
export interface FractionBand {
  /** The x values (evaluations). */
  x: number[];
  /** Median fraction of optimum at each x. */
  median: number[];
  /** 25th percentile at each x. */
  p25: number[];
  /** 75th percentile at each x. */
  p75: number[];
}

/**
 * The fraction of optimum of runs (one per seed) after each of `budgets`
 * evaluations, summarised over the runs exactly as {@link compareRows}
 * tables it ({@link fractionAt}: a run that ended earlier keeps its final
 * value), so the plotted band and the tabled median agree at every budget.
 *
 * @example
 * ```ts
 * import { compareRows, fractionBand } from "./comparison.ts";
 * const runs = [
 *   { best: [4, 2, 1], wall: [0, 0, 0], evals: 3 },
 *   { best: [Infinity, 2], wall: [0, 0], evals: 2 },
 * ];
 * const band = fractionBand(runs, 1, [1, 2, 3]);
 * const row = compareRows(new Map([["s", runs]]), [3], 1)[0];
 * if (band.median[2] !== row.median_fraction) throw new Error();
 * ```
 */
export function fractionBand(
  runs: readonly RunTrace[],
  optimum: number,
  budgets: readonly number[],
): FractionBand {
  checkRuns(runs, optimum);
  if (!Array.isArray(budgets)) {
    throw new TypeError(`budgets must be a list of evaluation counts, got ${described(budgets)}`);
  }
  budgets.forEach((b, i) => checkInteger(b, `budgets[${i}]`, { min: 0 }));
  const band: FractionBand = { x: [...budgets], median: [], p25: [], p75: [] };
  for (const b of budgets) {
    const s = summary(runs.map((r) => fractionAt(r, b, optimum)));
    band.median.push(s.median);
    band.p25.push(s.p25);
    band.p75.push(s.p75);
  }
  return band;
}

/** Throws a TypeError/RangeError naming `runs` or `optimum` when they are not runs and a time. */
function checkRuns(runs: readonly RunTrace[], optimum: number): void {
  if (!Array.isArray(runs)) {
    throw new TypeError(`runs must be a list of { best, wall, evals }, got ${described(runs)}`);
  }
  runs.forEach((r: Partial<RunTrace>, i) => {
    if (typeof r !== "object" || r === null || !Array.isArray(r.best) || !Array.isArray(r.wall)) {
      throw new TypeError(`runs[${i}] must be a { best, wall, evals } run, got ${described(r)}`);
    }
  });
  checkNumber(optimum, "optimum", { min: 0 });
}

/**
 * The fraction of optimum of runs (one per seed) against wall seconds: at
 * each of `points` times from 0 to `until`, each run's best so far among
 * the evaluations finished by then (0 before its first valid one), summarised
 * over the runs. Runs that ended earlier keep their final value.
 */
export function fractionOverWall(
  runs: readonly RunTrace[],
  optimum: number,
  until: number,
  points = 100,
): FractionBand {
  checkRuns(runs, optimum);
  checkNumber(until, "until", { min: 0 });
  checkInteger(points, "points", { min: 1 });
  const x = Array.from({ length: points }, (_, i) => (until * (i + 1)) / points);
  const band: FractionBand = { x, median: [], p25: [], p75: [] };
  for (const t of x) {
    const f = runs.map((r) => {
      let n = 0;
      while (n < r.wall.length && r.wall[n] <= t) n++;
      return fractionAt(r, n, optimum);
    });
    const s = summary(f);
    band.median.push(s.median);
    band.p25.push(s.p25);
    band.p75.push(s.p75);
  }
  return band;
}

/** What `compare` prints as its last line of JSON for one space. */
export interface CompareOutput {
  /** The space's name. */
  space: string;
  /** The `--space` entry compared (e.g. `gemm_RTX_3090`). */
  spec: string;
  /** Best known seconds (replay) or best measured (live). */
  optimum: number;
  /** One row per strategy and budget ({@link compareRows}, without wall seconds). */
  results: Omit<CompareRow, "wall_seconds">[];
  /** Samples each strategy needed to reach 95% of the optimum (null: some seeds never did). */
  reach: (Omit<ReachRow, "median_samples" | "p25" | "p75"> & {
    median_samples: number | null;
    p25: number | null;
    p75: number | null;
  })[];
  /**
   * Budget-aggregated score of each strategy (search/score.ts): area under the
   * mean fraction-of-optimum curve over budgets from the smallest to the
   * largest asked, 0 for random search and 1 for the optimum at once (null
   * on a live space without `random` among the strategies).
   */
  scores: Record<string, number | null>;
}

/** What `compare` prints for several spaces (`--space a,b` or `--space all`). */
export interface CompareManyOutput {
  spaces: CompareOutput[];
  /** Strategies by mean rank of their score over the spaces. */
  ranking: RankRow[];
}
