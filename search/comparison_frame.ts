/**
 * A comparison of strategies as data frames (arquero tables): every run's
 * tuning trace in long form ({@link runsFrame}: one row per strategy, seed
 * and evaluation) and the comparison's rows ({@link compareFrame}: the
 * figures `compare` tables and prints as JSON, from `compareRows`, whose
 * statistics are those of `ir/stats.ts`). A notebook shows either directly,
 * or filters, groups and joins them.
 *
 * @example
 * ```ts
 * import { op } from "npm:arquero@8.0.3";
 * import { compareFrame, runsFrame } from "./comparison_frame.ts";
 * const runs = new Map([["s", [{ best: [4, 2, 1], wall: [0.1, 0.2, 0.3], evals: 3 }]]]);
 * const long = runsFrame(runs, 1);
 * if (long.numRows() !== 3 || long.get("fraction", 2) !== 1) throw new Error();
 * const best = long.groupby("strategy").rollup({ f: op.max("fraction") });
 * if (best.get("f", 0) !== 1) throw new Error();
 * if (compareFrame(runs, [1, 3], 1).get("median_fraction", 0) !== 0.25) throw new Error();
 * ```
 * @module
 */
// arquero 8 asks for @uwdata/flechette ^2; 2.7 needs a package the npm registry lacks, so the
// module graph pins 2.6.0 (no deno.json needed: this holds for an importer in any folder).
import "npm:@uwdata/flechette@2.6.0";
import { type ColumnTable, from, table } from "npm:arquero@8.0.3";
import { compareRows, type RunTrace } from "./comparison.ts";
import { checkNumber, described } from "../ir/check.ts";

/** Throws a TypeError unless `runs` is a Map of lists of runs. */
function checkRunsMap(runs: ReadonlyMap<string, readonly RunTrace[]>): void {
  if (!(runs instanceof Map) || ![...runs.values()].every((l) => Array.isArray(l))) {
    throw new TypeError(
      `runs must be a Map from strategy name to its runs ({ best, wall, evals }[]), got ${
        described(runs)
      }`,
    );
  }
}

/**
 * Runs of each strategy (one per seed, in seed order) in long form:
 * `strategy`, `seed` (the run's index), `evaluation` (1, 2, ...),
 * `best_seconds` (best so far; Infinity before the first valid one),
 * `fraction` (of the optimum; 0 before the first valid one) and
 * `wall_seconds`.
 */
export function runsFrame(
  runs: ReadonlyMap<string, readonly RunTrace[]>,
  optimum: number,
): ColumnTable {
  checkRunsMap(runs);
  checkNumber(optimum, "optimum", { min: 0 });
  const cols = {
    strategy: [] as string[],
    seed: [] as number[],
    evaluation: [] as number[],
    best_seconds: [] as number[],
    fraction: [] as number[],
    wall_seconds: [] as number[],
  };
  for (const [strategy, list] of runs) {
    list.forEach((r, seed) => {
      r.best.forEach((b, i) => {
        cols.strategy.push(strategy);
        cols.seed.push(seed);
        cols.evaluation.push(i + 1);
        cols.best_seconds.push(b);
        cols.fraction.push(Number.isFinite(b) ? optimum / b : 0);
        cols.wall_seconds.push(r.wall[i]);
      });
    });
  }
  return table(cols);
}

/** The rows of `compareRows` (per strategy and budget: mean, median, quartiles, ...) as a table. */
export function compareFrame(
  runs: Map<string, RunTrace[]>,
  budgets: number[],
  optimum: number,
): ColumnTable {
  checkRunsMap(runs);
  if (!Array.isArray(budgets)) {
    throw new TypeError(`budgets must be a list of evaluation counts, got ${described(budgets)}`);
  }
  checkNumber(optimum, "optimum", { min: 0 });
  return from(compareRows(runs, budgets, optimum));
}
