/**
 * Whether a ranking is within the noise: the best candidate and the runner-up
 * (or two strategies' final bests) differ by less than their measured spread
 * (`spread` of ir/stats.ts, the interquartile range over the median of the
 * repeats), or the machine's load during the best's measurement exceeded its
 * core count. `tune`, `compare` and `report` print {@link RankingNoise.warning}
 * and put the whole decision in their JSON.
 *
 * Closeness is judged against the larger of the two spreads: two results
 * `apart` (runner-up / best − 1) less than that could swap on a rerun. A
 * result of one repeat has no spread (null), and then only the load can make
 * the ranking uncertain.
 *
 * @example
 * ```ts
 * import { rankingNoise } from "./ranking_noise.ts";
 * const best = { seconds: 0.812e-3, times: [0.79e-3, 0.812e-3, 0.84e-3], conditions: { load1: 3.1 } };
 * const next = { seconds: 0.83e-3, times: [0.81e-3, 0.83e-3, 0.855e-3] };
 * const n = rankingNoise(best, next, { cores: 2 });
 * console.log(n.warning);
 * // warning: ranking uncertain: best 0.812 ms (spread 3.1%) vs runner-up 0.830 ms (spread 2.7%), 2.2% apart; load 3.1 on 2 cores
 * if (!n.uncertain || n.reasons.join() !== "close,load") throw new Error();
 * ```
 * @module
 */
import { spread } from "../ir/stats.ts";
import type { MeasureConditions } from "../ir/conditions.ts";

/** A measured result as the decision reads it (a `ResultRow` fits). */
export interface RankedResult {
  /** Seconds per call (the median of `times`). */
  seconds: number;
  /** Seconds per call of each repeat. */
  times: readonly number[];
  /** Conditions during its measurement, when recorded. */
  conditions?: MeasureConditions;
}

/** One side of the comparison, as reported. */
export interface RankedFigure {
  /** Seconds per call. */
  seconds: number;
  /** Relative interquartile range of the repeats; null with fewer than two repeats. */
  spread: number | null;
  /** 1-minute load average during its measurement; null when not recorded. */
  load1: number | null;
}

/** The decision of {@link rankingNoise}. */
export interface RankingNoise {
  /** True when any reason applies. */
  uncertain: boolean;
  /** `"close"`: apart by less than the larger spread; `"load"`: the best's load above the cores. */
  reasons: ("close" | "load")[];
  /** The best result. */
  best: RankedFigure;
  /** The runner-up, null when there is none. */
  runnerUp: RankedFigure | null;
  /** runner-up seconds / best seconds − 1; null without a runner-up. */
  apart: number | null;
  /** Cores the load was compared with. */
  cores: number;
  /** The warning line (`warning: ranking uncertain: ...`), present only when uncertain. */
  warning?: string;
}

/** Options of {@link rankingNoise}. */
export interface RankingNoiseOptions {
  /** Cores of the machine. Default `navigator.hardwareConcurrency`. */
  cores?: number;
  /** What the two sides are called in the warning. Default `["best", "runner-up"]`. */
  labels?: readonly [string, string];
}

function figure(r: RankedResult): RankedFigure {
  const s = spread(r.times);
  const load = r.conditions?.load1;
  return {
    seconds: r.seconds,
    spread: Number.isNaN(s) ? null : s,
    load1: typeof load === "number" && Number.isFinite(load) ? load : null,
  };
}

/** Seconds as the warning prints them: three decimals of s, ms (from 0.1 ms), µs or ns. */
function time(s: number): string {
  if (s >= 1) return `${s.toFixed(3)} s`;
  if (s >= 1e-4) return `${(s * 1e3).toFixed(3)} ms`;
  if (s >= 1e-7) return `${(s * 1e6).toFixed(3)} µs`;
  return `${(s * 1e9).toFixed(3)} ns`;
}

const pct = (x: number | null) => x === null ? "n/a" : `${(x * 100).toFixed(1)}%`;

/**
 * Decides whether the ranking of `best` over `runnerUp` is within the noise;
 * see the module documentation.
 *
 * @throws {RangeError} when `cores` is not a positive integer
 */
export function rankingNoise(
  best: RankedResult,
  runnerUp: RankedResult | undefined,
  o: RankingNoiseOptions = {},
): RankingNoise {
  const cores = o.cores ?? navigator.hardwareConcurrency;
  if (!Number.isInteger(cores) || cores < 1) {
    throw new RangeError(`cores must be a positive integer, got ${cores}`);
  }
  const [bestName, nextName] = o.labels ?? ["best", "runner-up"];
  const b = figure(best);
  const n = runnerUp ? figure(runnerUp) : null;
  const apart = n && b.seconds > 0 ? n.seconds / b.seconds - 1 : null;
  const reasons: RankingNoise["reasons"] = [];
  const widest = n ? Math.max(b.spread ?? -Infinity, n.spread ?? -Infinity) : -Infinity;
  if (apart !== null && Number.isFinite(widest) && apart < widest) reasons.push("close");
  if (b.load1 !== null && b.load1 > cores) reasons.push("load");
  const out: RankingNoise = {
    uncertain: reasons.length > 0,
    reasons,
    best: b,
    runnerUp: n,
    apart,
    cores,
  };
  if (out.uncertain) {
    const parts = [
      n
        ? `${bestName} ${time(b.seconds)} (spread ${pct(b.spread)}) vs ${nextName} ${
          time(n.seconds)
        } (spread ${pct(n.spread)}), ${pct(apart)} apart`
        : `${bestName} ${time(b.seconds)} (spread ${pct(b.spread)})`,
      ...(reasons.includes("load")
        ? [`load ${Number(b.load1!.toFixed(2))} on ${cores} cores`]
        : []),
    ];
    out.warning = `warning: ranking uncertain: ${parts.join("; ")}`;
  }
  return out;
}

/**
 * The decision for the best and the runner-up among a run's results (valid,
 * timed ones; ties broken by order); null when none is valid.
 *
 * @example
 * ```ts
 * import { rankingOfResults } from "./ranking_noise.ts";
 * const n = rankingOfResults([
 *   { errorKind: "none", seconds: 2e-3, times: [2e-3, 2e-3] },
 *   { errorKind: "wrong_answer", seconds: null, times: [] },
 *   { errorKind: "none", seconds: 1e-3, times: [1e-3, 1e-3] },
 * ], { cores: 4 });
 * if (n?.uncertain !== false || n.apart !== 1) throw new Error();
 * ```
 */
export function rankingOfResults(
  results: readonly (
    & { errorKind: string; seconds: number | null; times: readonly number[] }
    & { conditions?: MeasureConditions }
  )[],
  o: RankingNoiseOptions = {},
): RankingNoise | null {
  const valid = results
    .filter((r) => r.errorKind === "none" && r.seconds !== null && r.seconds > 0)
    .map((r, i) => ({ r: r as RankedResult, i }))
    .sort((a, b) => a.r.seconds - b.r.seconds || a.i - b.i);
  if (valid.length === 0) return null;
  return rankingNoise(valid[0].r, valid[1]?.r, o);
}

/**
 * The decision for the two strategies whose final bests (each strategy's best
 * result over its runs) are fastest, named in the warning; null when no
 * strategy has a valid result.
 *
 * @example
 * ```ts
 * import { rankingOfStrategies } from "./ranking_noise.ts";
 * const n = rankingOfStrategies(new Map([
 *   ["random", { seconds: 1.02e-3, times: [1e-3, 1.02e-3, 1.1e-3] }],
 *   ["ga", { seconds: 1e-3, times: [0.95e-3, 1e-3, 1.05e-3] }],
 * ]), { cores: 4 });
 * if (!n?.warning?.startsWith("warning: ranking uncertain: ga 1.000 ms")) throw new Error(n?.warning);
 * ```
 */
export function rankingOfStrategies(
  finals: ReadonlyMap<string, RankedResult | undefined>,
  o: Omit<RankingNoiseOptions, "labels"> = {},
): (RankingNoise & { strategies: [string, string | null] }) | null {
  const ranked = [...finals].flatMap(([name, r]) => r && r.seconds > 0 ? [{ name, r }] : [])
    .sort((a, b) => a.r.seconds - b.r.seconds);
  if (ranked.length === 0) return null;
  const [first, second] = ranked;
  return {
    ...rankingNoise(first.r, second?.r, {
      ...o,
      labels: [first.name, second?.name ?? "runner-up"],
    }),
    strategies: [first.name, second?.name ?? null],
  };
}
