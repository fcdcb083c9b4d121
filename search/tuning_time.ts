/**
 * Replay in tuning time, as Kernel Tuner's simulation mode and the
 * methodology of Willemsen et al. (FGCS 2024) budget a run: each evaluation
 * advances a clock by what measuring the configuration cost when it was
 * recorded, plus the strategy's own time for proposing it, measured here.
 *
 * - A configuration's recorded cost ({@link recordedSeconds}) is its compile,
 *   verification, benchmark and framework time. The benchmark part is the sum
 *   of its recorded runtimes (`times`, as the methodology's clock sums
 *   `runtimes`), or the recorded `benchmark_time` when it has none (a failed
 *   configuration: what its failure cost).
 * - A repeated proposal costs nothing: the tuning loop answers it from its
 *   records (a cache hit) and it is not an evaluation.
 * - The strategy's own time is the replaying process's wall time (proposing,
 *   observing, the loop's bookkeeping), which is all the wall time of a replay
 *   since looking a configuration up costs nothing; {@link ClockOptions}
 *   `strategyTime: false` leaves it out (to compare on another machine).
 *
 * A live run's clock is its wall time: its records hold each candidate's build,
 * run (with the output check, `verifySeconds`), framework and strategy seconds,
 * which sum to the loop's wall time, so `liveClock` of tuner/compare_time.ts
 * puts a recorded live run on this same axis.
 *
 * @example
 * ```ts
 * import { tuningClock } from "./tuning_time.ts";
 * // Costs of three evaluations (s) and the replay's wall clock after each.
 * const t = tuningClock([1, 2, 0.5], [0.01, 0.02, 0.03]);
 * console.log(t); // [1.01, 3.02, 3.53]
 * console.log(tuningClock([1, 2, 0.5], [0.01, 0.02, 0.03], { strategyTime: false })); // [1, 3, 3.5]
 * ```
 * @module
 */
import { sortedQuantile } from "../ir/stats.ts";
import type { KernelTunerEntry } from "../datasets/kerneltuner.ts";
import type { Candidate, Strategy } from "./strategy.ts";
import type { RunTrace } from "./comparison.ts";
import type { SpaceRecord } from "./methodology.ts";
import type { ReplaySpace } from "./replay.ts";

/** How the tuning clock counts. */
export interface ClockOptions {
  /** Add the strategy's own measured time (default true). */
  strategyTime?: boolean;
}

/**
 * The recorded seconds of measuring one configuration (see the module doc);
 * 0 for an entry without timing or no entry (absent from the cache).
 *
 * @example
 * ```ts
 * import { recordedSeconds } from "./tuning_time.ts";
 * const s = recordedSeconds({ time: 2, times: [2, 2], timing: { compile: 900, framework: 100 } });
 * if (Math.abs(s - 1.004) > 1e-12) throw new Error(String(s));
 * ```
 */
export function recordedSeconds(entry: KernelTunerEntry | undefined): number {
  if (!entry) return 0;
  const t = entry.timing ?? {};
  const bench = entry.times && entry.times.length > 0
    ? entry.times.reduce((a, b) => a + b, 0)
    : t.benchmark ?? 0;
  return ((t.compile ?? 0) + (t.verification ?? 0) + bench + (t.framework ?? 0)) / 1000;
}

/**
 * The tuning clock of a run: seconds after each evaluation, the running sum
 * of the evaluations' recorded costs plus (unless left out) the run's wall
 * seconds after that evaluation.
 *
 * @param costs recorded seconds of each evaluation, in order
 * @param wall the replay's wall seconds after each evaluation (same length)
 * @throws {RangeError} when the lengths differ
 */
export function tuningClock(
  costs: readonly number[],
  wall: readonly number[],
  o: ClockOptions = {},
): number[] {
  if (costs.length !== wall.length) {
    throw new RangeError(`costs has ${costs.length} evaluations and wall ${wall.length}`);
  }
  const strategyTime = o.strategyTime ?? true;
  let sum = 0;
  return costs.map((c, i) => {
    sum += c;
    return sum + (strategyTime ? wall[i] : 0);
  });
}

/** A run on the tuning clock: {@link RunTrace} with `wall` replaced by the clock's seconds. */
export function onClock(run: RunTrace, clock: readonly number[]): RunTrace {
  if (clock.length !== run.best.length) {
    throw new RangeError(`clock has ${clock.length} evaluations and the run ${run.best.length}`);
  }
  return { best: run.best, wall: [...clock], evals: run.evals };
}

/**
 * What {@link timeBudgeted} wraps: anything that measures batches of candidates, as
 * `measure/measurer.ts`'s `Measurer` does (search/ sits below measure/, so it names only the shape).
 */
export interface BatchMeasurer {
  /** Shown in records and messages. */
  name: string;
  /** Measures a batch of candidates. */
  // deno-lint-ignore no-explicit-any
  measure(batch: Candidate[], options?: any): Promise<unknown>;
}

/**
 * A strategy and a measurer that stop at a tuning-time budget: the measurer
 * adds each measured candidate's recorded cost to the clock, and the strategy
 * proposes nothing once the clock (costs, plus the wall time since the first
 * proposal unless `strategyTime` is false) has reached `limitSeconds`, which
 * ends the tuning loop. The evaluation that crosses the limit is kept, as
 * Kernel Tuner's budget does.
 *
 * With `minEvaluations`, the run goes on past the limit until it has made
 * that many evaluations (or the strategy runs out), so that the same runs can
 * also be scored at evaluation budgets up to it; {@link cutAtLimit} gives back
 * the part of such a run that the time limit alone would have made.
 *
 * @param costOf recorded seconds of a candidate
 * @throws {RangeError} when `limitSeconds` is not a positive number
 */
export function timeBudgeted<M extends BatchMeasurer>(
  strategy: Strategy,
  measurer: M,
  costOf: (c: Candidate) => number,
  limitSeconds: number,
  o: ClockOptions & { minEvaluations?: number } = {},
): { strategy: Strategy; measurer: M; clock(): number } {
  if (!(limitSeconds > 0) || !Number.isFinite(limitSeconds)) {
    throw new RangeError(`limitSeconds must be a positive number of seconds, got ${limitSeconds}`);
  }
  const strategyTime = o.strategyTime ?? true;
  const minEvaluations = o.minEvaluations ?? 0;
  let spent = 0;
  let measured = 0;
  let started: number | undefined;
  const clock = () =>
    spent + (strategyTime && started !== undefined ? (performance.now() - started) / 1000 : 0);
  return {
    clock,
    strategy: {
      name: strategy.name,
      propose(n) {
        started ??= performance.now();
        return clock() >= limitSeconds && measured >= minEvaluations ? [] : strategy.propose(n);
      },
      observe: (obs) => strategy.observe(obs),
    },
    measurer: {
      ...measurer,
      name: measurer.name,
      measure: async (batch: Candidate[], mo?: unknown) => {
        const out = await measurer.measure(batch, mo);
        for (const c of batch) spent += costOf(c);
        measured += batch.length;
        return out;
      },
    } as M,
  };
}

/**
 * The part of a run on the tuning clock ({@link onClock}) that a time limit
 * alone lets it make: its evaluations up to and including the first one that
 * reaches the limit (the one that crosses it is kept, as {@link timeBudgeted}
 * keeps it). A run that ended before the limit is returned whole.
 *
 * @example
 * ```ts
 * import { cutAtLimit } from "./tuning_time.ts";
 * const run = { best: [4, 2, 1, 1], wall: [1, 2, 3, 4], evals: 4 };
 * console.log(cutAtLimit(run, 2.5)); // { best: [4, 2, 1], wall: [1, 2, 3], evals: 3 }
 * ```
 */
export function cutAtLimit(run: RunTrace, limitSeconds: number): RunTrace {
  const end = run.wall.findIndex((t) => t >= limitSeconds);
  if (end < 0 || end === run.wall.length - 1) return run;
  return { best: run.best.slice(0, end + 1), wall: run.wall.slice(0, end + 1), evals: end + 1 };
}

/** One row of a comparison at a tuning-time budget. */
export interface TimeRow {
  strategy: string;
  /** The budget, in seconds of tuning time. */
  seconds: number;
  seeds: number;
  mean_fraction: number;
  median_fraction: number;
  p25: number;
  p75: number;
  /** Mean evaluations made within the budget. */
  mean_evals: number;
}

/**
 * Rows at tuning-time budgets: for each strategy's runs on the clock
 * ({@link onClock}) and each budget, the fraction of optimum among the
 * evaluations finished within it (0 before the first valid one).
 *
 * @example
 * ```ts
 * import { timeRows } from "./tuning_time.ts";
 * const run = { best: [4, 2, 1], wall: [1, 2, 3], evals: 3 };
 * const [r] = timeRows(new Map([["s", [run]]]), [2.5], 1);
 * if (r.mean_fraction !== 0.5 || r.mean_evals !== 2) throw new Error();
 * ```
 */
export function timeRows(
  runs: ReadonlyMap<string, readonly RunTrace[]>,
  budgets: readonly number[],
  optimum: number,
): TimeRow[] {
  const rows: TimeRow[] = [];
  for (const [strategy, list] of runs) {
    for (const t of budgets) {
      const evals: number[] = [];
      const f = list.map((r) => {
        let n = 0;
        while (n < r.wall.length && r.wall[n] <= t) n++;
        evals.push(n);
        const best = n === 0 ? Infinity : r.best[n - 1];
        return Number.isFinite(best) ? optimum / best : 0;
      });
      const sorted = [...f].sort((a, b) => a - b);
      rows.push({
        strategy,
        seconds: t,
        seeds: list.length,
        mean_fraction: f.reduce((a, b) => a + b, 0) / Math.max(1, f.length),
        median_fraction: sortedQuantile(sorted, 0.5),
        p25: sortedQuantile(sorted, 0.25),
        p75: sortedQuantile(sorted, 0.75),
        mean_evals: evals.reduce((a, b) => a + b, 0) / Math.max(1, evals.length),
      });
    }
  }
  return rows;
}

/** Renders {@link timeRows} as a Markdown table. */
export function timeTable(rows: readonly TimeRow[]): string {
  return [
    "| strategy | seconds | mean | median | p25 | p75 | mean evals |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) =>
      `| ${r.strategy} | ${r.seconds} | ${r.mean_fraction.toFixed(3)} | ${
        r.median_fraction.toFixed(3)
      } | ${r.p25.toFixed(3)} | ${r.p75.toFixed(3)} | ${r.mean_evals.toFixed(1)} |`
    ),
  ].join("\n");
}

/**
 * What the methodology score needs of a replayed space (see
 * search/methodology.ts): the valid values (seconds per call) and the
 * recorded seconds of each valid and each invalid configuration; points absent
 * from the cache or restricted are not configurations.
 *
 * @example
 * ```ts
 * import { replaySpaceFromFile } from "./replay.ts";
 * import { spaceRecordOf } from "./tuning_time.ts";
 * const s = spaceRecordOf(await replaySpaceFromFile("convolution_MI250X"));
 * console.log(s.values.length, s.invalidSeconds.length);
 * ```
 */
export function spaceRecordOf(r: ReplaySpace): SpaceRecord {
  const values: number[] = [], validSeconds: number[] = [], invalidSeconds: number[] = [];
  for (let i = 0; i < r.space.size; i++) {
    const e = r.entryOf(i);
    if (!e) continue;
    const res = r.evaluateIndex(i);
    if (res.errorKind === "none" && res.seconds !== undefined) {
      values.push(res.seconds);
      validSeconds.push(recordedSeconds(e));
    } else invalidSeconds.push(recordedSeconds(e));
  }
  return { values, validSeconds, invalidSeconds };
}
