/**
 * Comparisons in tuning time, for `compare --budget-time` (and, once it
 * lands, `compareStrategies`): runs on a replayed space stop at a budget of
 * tuning seconds (search/tuning_time.ts), their curves are tabled over time
 * beside the curves over evaluations, and each strategy gets the methodology
 * score of Willemsen et al. (FGCS 2024; search/methodology.ts) per space and
 * aggregated over spaces.
 *
 * @example
 * ```ts
 * import { replaySpaceFromFile } from "../search/replay.ts";
 * import { createStrategy } from "./strategies.ts";
 * import { runStrategy } from "./run_strategy.ts";
 * import { createMemoryRecordStore } from "../datasets/memory_store.ts";
 * import { replayMeasurer } from "../measure/replay.ts";
 * import { budgetedRun, runIdsOf, timeResults, timeSpace } from "./compare_time.ts";
 * const r = await replaySpaceFromFile("convolution_MI250X");
 * const ts = timeSpace(r, { budgets: "auto" });
 * const store = createMemoryRecordStore();
 * const config = { compare: "convolution_MI250X", budgetTime: "auto" };
 * const traces = [];
 * for (let seed = 0; seed < 3; seed++) {
 *   const s = await createStrategy("random", r.space, { seed, candidateOf: r.candidateOf });
 *   const b = budgetedRun(s, replayMeasurer(r), ts);
 *   traces.push(await runStrategy(b.strategy, b.measurer, {
 *     budget: r.space.size, store, run: { strategy: "random", seed, config },
 *   }));
 * }
 * const ids = await runIdsOf(store, ["random"], 3, config);
 * const out = await timeResults(store, ids, new Map([["random", traces]]), ts);
 * console.log(ts.range.tEnd.toFixed(1), out.scores.random); // 83.2 and a score near 0
 * ```
 * @module
 */
import type { RecordStore } from "../datasets/record_store.ts";
import type { ResultRow } from "../datasets/db.ts";
import type { KernelTunerTiming } from "../datasets/kerneltuner_cache.ts";
import type { Measurer } from "../measure/measurer.ts";
import type { RunTrace } from "../search/comparison.ts";
import {
  baselineCurve,
  methodologyRange,
  methodologyScore,
  performanceCurve,
  type RangeOptions,
  type SpaceRecord,
  standardisedCurve,
  type TimeRange,
} from "../search/methodology.ts";
import type { ReplaySpace } from "../search/replay.ts";
import type { Strategy } from "../search/strategy.ts";
import {
  type ClockOptions,
  cutAtLimit,
  onClock,
  recordedSeconds,
  spaceRecordOf,
  timeBudgeted,
  type TimeRow,
  timeRows,
  tuningClock,
} from "../search/tuning_time.ts";

/** Options of a comparison in tuning time. */
export interface TimeCompareOptions extends ClockOptions {
  /**
   * Budgets in seconds of tuning time (runs go to the largest), or `"auto"`:
   * the methodology's budget of each space, (1 + margin) × T(percentile),
   * tabled at a quarter, a half and the whole of its range.
   */
  budgets: readonly number[] | "auto";
  /** The methodology's range settings (defaults: Kernel Tuner's hyperparameter tuner's). */
  range?: RangeOptions;
  /** Seed of the methodology curve's bagging (default 0). */
  seed?: number;
}

/** A replayed space set up for a comparison in tuning time. */
export interface TimeSpace {
  record: SpaceRecord;
  range: TimeRange;
  /** The random-search baseline on the range's grid. */
  baseline: number[];
  /** Seconds of tuning time each run gets. */
  limit: number;
  /** Seconds at which the table compares. */
  budgets: number[];
  /** Recorded seconds of measuring a configuration. */
  costOf(knobs: readonly number[]): number;
  options: TimeCompareOptions;
}

/**
 * Sets a replayed space up for a comparison in tuning time.
 *
 * @throws {RangeError} for a budget that is not a positive number
 */
export function timeSpace(replay: ReplaySpace, o: TimeCompareOptions): TimeSpace {
  const record = spaceRecordOf(replay);
  const range = methodologyRange(record, o.range);
  let budgets: number[];
  if (o.budgets === "auto") {
    const r = (x: number) => Number(x.toPrecision(4));
    budgets = [r(range.tEnd / 4), r(range.tEnd / 2), r(range.tEnd)];
  } else {
    budgets = [...o.budgets].sort((a, b) => a - b);
    for (const b of budgets) {
      if (!(b > 0) || !Number.isFinite(b)) {
        throw new RangeError(`budgets must be positive seconds, got ${b}`);
      }
    }
    if (budgets.length === 0) throw new RangeError("budgets must name at least one budget");
  }
  const limit = o.budgets === "auto" ? range.timeLimit : budgets[budgets.length - 1];
  return {
    record,
    range,
    baseline: baselineCurve(record, range),
    limit,
    budgets,
    costOf: (knobs) => recordedSeconds(replay.entryOf(replay.indexOf([...knobs]))),
    options: o,
  };
}

/**
 * What one configuration costs the methodology score at the end of a space's
 * range: the standardised score of the first recorded value worse than the
 * baseline's there. Where the baseline ends close to the optimum with a gap
 * below it (few configurations, a near tie at the top), this is far below
 * −1: a strategy one configuration behind random search at the end scores
 * that at those grid points, and the space's score swings by whole units.
 * Near 0 on a space whose values are dense near the optimum.
 *
 * @example
 * ```ts
 * import { endLeverage } from "./compare_time.ts";
 * // Optimum 1, baseline at the end 1.01, next configuration 2: one behind scores -99.
 * const ts = { record: { values: [1, 1.01, 2, 3], validSeconds: [], invalidSeconds: [] },
 *   range: { optimum: 1 }, baseline: [3, 1.01] };
 * console.log(endLeverage(ts).toFixed(0)); // -99
 * ```
 */
export function endLeverage(
  ts: {
    record: Pick<SpaceRecord, "values">;
    range: Pick<TimeRange, "optimum">;
    baseline: readonly number[];
  },
): number {
  const b = ts.baseline[ts.baseline.length - 1];
  const opt = ts.range.optimum;
  if (!(b > opt)) return 0;
  let next = Infinity;
  for (const v of ts.record.values) if (v > b && v < next) next = v;
  return Number.isFinite(next) ? (next - b) / (opt - b) : 0;
}

/**
 * A run's strategy and measurer that stop at the space's tuning-time limit,
 * or, with `minEvaluations`, once they have also made that many evaluations
 * (so that the same runs are scored at evaluation budgets up to it; the time
 * scores only see each run up to the limit, {@link timeResults}).
 */
export function budgetedRun(
  strategy: Strategy,
  measurer: Measurer,
  ts: TimeSpace,
  minEvaluations = 0,
): { strategy: Strategy; measurer: Measurer } {
  return timeBudgeted(strategy, measurer, (c) => ts.costOf(c.knobs ?? []), ts.limit, {
    ...ts.options,
    minEvaluations,
  });
}

/**
 * The ids of the recorded runs of each strategy (seed 0 to seeds − 1; the
 * last run of a seed whose config equals `config`), in seed order.
 */
export async function runIdsOf(
  store: RecordStore,
  strategies: readonly string[],
  seeds: number,
  config: Record<string, unknown>,
): Promise<Map<string, number[]>> {
  const all = await store.runs();
  const want = JSON.stringify(config);
  const out = new Map<string, number[]>();
  for (const name of strategies) {
    const ids: number[] = [];
    for (let seed = 0; seed < seeds; seed++) {
      const run = all.findLast((r) =>
        r.strategy === name && r.seed === seed && JSON.stringify(r.config) === want
      );
      if (run) ids.push(run.id);
    }
    out.set(name, ids);
  }
  return out;
}

/** What a comparison in tuning time gives on one space. */
export interface TimeResults {
  /** Fractions of optimum at each time budget. */
  rows: TimeRow[];
  /** Each strategy's runs on the tuning clock (`wall` = clock seconds). */
  clocks: Map<string, RunTrace[]>;
  /** Methodology score per strategy on this space (NaN: no valid evaluation within its range). */
  scores: Record<string, number>;
  /** Standardised curve per strategy on the range's grid (for aggregation over spaces). */
  curves: Record<string, number[]>;
}

/**
 * Puts each strategy's runs on the tuning clock (recorded costs of their
 * evaluations, from the records, plus their wall time unless left out) and
 * scores them.
 *
 * @param ids recorded run ids per strategy ({@link runIdsOf}), in the order of `traces`
 * @param traces the runs' traces per strategy
 */
export async function timeResults(
  store: RecordStore,
  ids: ReadonlyMap<string, readonly number[]>,
  traces: ReadonlyMap<string, readonly RunTrace[]>,
  ts: TimeSpace,
): Promise<TimeResults> {
  const clocks = new Map<string, RunTrace[]>();
  const scores: Record<string, number> = {};
  const curves: Record<string, number[]> = {};
  for (const [name, list] of traces) {
    const runIds = ids.get(name) ?? [];
    if (runIds.length !== list.length) {
      throw new RangeError(`${name}: ${list.length} runs but ${runIds.length} recorded run ids`);
    }
    const onTime: RunTrace[] = [];
    for (const [k, trace] of list.entries()) {
      const costs = (await store.candidates(runIds[k]))
        .filter((c) => c.result)
        .map((c) => c.knobs ? ts.costOf(c.knobs) : 0);
      // A run made past the limit (for evaluation budgets) counts up to the limit here.
      onTime.push(cutAtLimit(onClock(trace, tuningClock(costs, trace.wall, ts.options)), ts.limit));
    }
    clocks.set(name, onTime);
    let curve;
    try {
      curve = performanceCurve(
        onTime.map((r) => ({ time: r.wall, best: r.best })),
        ts.record,
        ts.range,
        { seed: ts.options.seed },
      );
    } catch (e) {
      // No valid evaluation within the time range: no curve, no score (NaN).
      if (!(e instanceof RangeError)) throw e;
      scores[name] = NaN;
      continue;
    }
    curves[name] = standardisedCurve(curve, ts.baseline, ts.range.optimum);
    scores[name] = methodologyScore([curves[name]]).score;
  }
  return { rows: timeRows(clocks, ts.budgets, ts.range.optimum), clocks, scores, curves };
}

/** A strategy's methodology score aggregated over spaces. */
export interface MethodologyRow {
  strategy: string;
  score: number;
  /** Standard deviation over the grid of the space-averaged curve. */
  error: number;
  /** Spaces aggregated. */
  spaces: number;
}

/**
 * The methodology score over spaces: each strategy's standardised curves
 * averaged by grid index over the spaces it ran on, then over the grid;
 * sorted best first.
 *
 * @example
 * ```ts
 * import { methodologyRanking } from "./compare_time.ts";
 * const rows = methodologyRanking([{ a: [0, 0], b: [1, 1] }, { a: [1, 1], b: [1, 0] }]);
 * if (rows[0].strategy !== "b" || rows[0].score !== 0.75) throw new Error();
 * ```
 */
export function methodologyRanking(
  perSpace: readonly Readonly<Record<string, readonly number[]>>[],
): MethodologyRow[] {
  const names = [...new Set(perSpace.flatMap((c) => Object.keys(c)))];
  return names.map((strategy) => {
    const curves = perSpace.flatMap((c) => c[strategy] ? [c[strategy]] : []);
    const { score, error } = methodologyScore(curves);
    return { strategy, score, error, spaces: curves.length };
  }).sort((a, b) => b.score - a.score);
}

/** Renders {@link methodologyRanking} rows as a Markdown table. */
export function methodologyTable(rows: readonly MethodologyRow[]): string {
  return [
    "| rank | strategy | methodology score | error | spaces |",
    "| --- | --- | --- | --- | --- |",
    ...rows.map((r, i) =>
      `| ${i + 1} | ${r.strategy} | ${r.score.toFixed(3)} | ${r.error.toFixed(3)} | ${r.spaces} |`
    ),
  ].join("\n");
}

/**
 * A live result's time parts as Kernel Tuner's cache names them, in
 * milliseconds (what a replay of the result would be charged): compile =
 * build seconds, verification = the output check, benchmark = the rest of the
 * run seconds, strategy and framework as recorded. A part the result did not
 * record is left out (a result of an earlier version has only compile and
 * benchmark).
 *
 * @example
 * ```ts
 * import { timingOfResult } from "./compare_time.ts";
 * import { recordedSeconds } from "../search/tuning_time.ts";
 * const t = timingOfResult({
 *   buildSeconds: 0.5, runSeconds: 0.2, verifySeconds: 0.05, strategySeconds: 0.01, frameworkSeconds: 0.002,
 * });
 * console.log(t); // { compile: 500, verification: 50, benchmark: 150, strategy: 10, framework: 2 }
 * // A replay charges compile + verification + benchmark + framework: the live result's cost.
 * if (Math.abs(recordedSeconds({ time: 1, timing: t }) - 0.702) > 1e-12) throw new Error();
 * ```
 */
export function timingOfResult(
  r: Pick<
    ResultRow,
    "buildSeconds" | "runSeconds" | "verifySeconds" | "strategySeconds" | "frameworkSeconds"
  >,
): KernelTunerTiming {
  const verify = r.verifySeconds ?? 0;
  return {
    compile: r.buildSeconds * 1e3,
    ...(r.verifySeconds !== undefined ? { verification: verify * 1e3 } : {}),
    benchmark: Math.max(0, r.runSeconds - verify) * 1e3,
    ...(r.strategySeconds !== undefined ? { strategy: r.strategySeconds * 1e3 } : {}),
    ...(r.frameworkSeconds !== undefined ? { framework: r.frameworkSeconds * 1e3 } : {}),
  };
}

/**
 * A recorded live run on the tuning clock of a replay: after each measured
 * candidate (in trial order), the running sum of its recorded cost (build,
 * run and framework seconds, as {@link timingOfResult} and `recordedSeconds`
 * charge a replayed configuration) plus, unless `strategyTime` is false, the
 * strategy's recorded seconds (the replay's own wall time). With every part
 * recorded this is the run's wall time at each result; a result of an
 * earlier version counts its build and run seconds only.
 *
 * @example
 * ```ts
 * import { liveClock } from "./compare_time.ts";
 * const parts = { buildSeconds: 1, runSeconds: 0.5, strategySeconds: 0.25, frameworkSeconds: 0.25 };
 * console.log(liveClock([parts, parts])); // [2, 4]
 * console.log(liveClock([parts, parts], { strategyTime: false })); // [1.75, 3.5]
 * ```
 */
export function liveClock(
  results: readonly Pick<
    ResultRow,
    "buildSeconds" | "runSeconds" | "verifySeconds" | "strategySeconds" | "frameworkSeconds"
  >[],
  o: ClockOptions = {},
): number[] {
  const strategyTime = o.strategyTime ?? true;
  let clock = 0;
  return results.map((r) => {
    clock += r.buildSeconds + r.runSeconds + (r.frameworkSeconds ?? 0) +
      (strategyTime ? r.strategySeconds ?? 0 : 0);
    return clock;
  });
}

/**
 * A recorded live run's trace ({@link RunTrace}: best seconds after each
 * measured candidate) on {@link liveClock}'s axis, for {@link timeRows} and
 * the methodology curves beside replayed runs.
 */
export async function liveRunTrace(
  store: RecordStore,
  runId: number,
  o: ClockOptions = {},
): Promise<RunTrace> {
  const results = (await store.candidates(runId)).flatMap((c) => c.result ?? []);
  let best = Infinity;
  const bests = results.map((r) => {
    if (r.errorKind === "none" && r.seconds !== null && r.seconds < best) best = r.seconds;
    return best;
  });
  return { best: bests, wall: liveClock(results, o), evals: results.length };
}
