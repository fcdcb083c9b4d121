/**
 * Whether a ranking is within the noise: the best candidate and the runner-up
 * (or two strategies' final bests) differ by less than their measured spread
 * (`spread` of ir/stats.ts, the interquartile range over the median of the
 * repeats), or the machine's load during the best's measurement exceeded its
 * core count, or the machine ran slow while the best or the runner-up was
 * timed: its speed probe (`MeasureConditions.probeGBps`, measure/harness.ts)
 * under {@link SLOW_SPEED} of the usual (`usualProbeGBps`; for a run's
 * results, the 90th percentile of their probes). `tune`, `compare` and
 * `report` print {@link RankingNoise.warning} and put the whole decision in
 * their JSON.
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
import { quantile, spread } from "../ir/stats.ts";
import type { MeasureConditions } from "../ir/conditions.ts";

/**
 * A result whose speed probe read under this share of the usual was timed
 * while the machine ran slow (a slow spell: on the virtual AVX2 EPYC of
 * 2026-12-04, a matmul at 0.6 to 0.7 of its speed for seconds at a time,
 * its probe at 0.8 to 0.9, with no load, steal or frequency change to show
 * it; bench/results/slow_spells.md).
 */
export const SLOW_SPEED = 0.9;

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
  /** The speed probe during its measurement (GB/s); null when not recorded. */
  probeGBps: number | null;
}

/** The decision of {@link rankingNoise}. */
export interface RankingNoise {
  /** True when any reason applies. */
  uncertain: boolean;
  /**
   * `"close"`: apart by less than the larger spread; `"load"`: the best's load
   * above the cores; `"slow"`: the best or the runner-up timed while the
   * machine ran under {@link SLOW_SPEED} of its usual speed.
   */
  reasons: ("close" | "load" | "slow")[];
  /** The best result. */
  best: RankedFigure;
  /** The runner-up, null when there is none. */
  runnerUp: RankedFigure | null;
  /** runner-up seconds / best seconds − 1; null without a runner-up. */
  apart: number | null;
  /** Cores the load was compared with. */
  cores: number;
  /** The machine's usual speed the probes were compared with (GB/s); null when unknown. */
  usualProbeGBps: number | null;
  /**
   * Of the results judged (a run's, for {@link rankingOfResults}), how many
   * were timed while the machine ran slow, out of how many with a probe.
   */
  slowTrials?: { slow: number; probed: number };
  /** The warning line (`warning: ranking uncertain: ...`), present only when uncertain. */
  warning?: string;
}

/** Options of {@link rankingNoise}. */
export interface RankingNoiseOptions {
  /** Cores of the machine. Default `navigator.hardwareConcurrency`. */
  cores?: number;
  /** What the two sides are called in the warning. Default `["best", "runner-up"]`. */
  labels?: readonly [string, string];
  /** The machine's usual speed probe (GB/s); without it no result is judged slow. */
  usualProbeGBps?: number;
}

function figure(r: RankedResult): RankedFigure {
  const s = spread(r.times);
  const load = r.conditions?.load1;
  return {
    seconds: r.seconds,
    spread: Number.isNaN(s) ? null : s,
    load1: typeof load === "number" && Number.isFinite(load) ? load : null,
    probeGBps: probeOf(r),
  };
}

function probeOf(r: RankedResult): number | null {
  const p = r.conditions?.probeGBps;
  return typeof p === "number" && Number.isFinite(p) && p > 0 ? p : null;
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
  const usual = o.usualProbeGBps !== undefined && o.usualProbeGBps > 0 ? o.usualProbeGBps : null;
  const slowed = ([[bestName, b], [nextName, n]] as const).flatMap(([name, f]) =>
    usual !== null && f?.probeGBps != null && f.probeGBps < SLOW_SPEED * usual
      ? [`${name} timed at ${(f.probeGBps / usual).toFixed(2)} of the usual speed`]
      : []
  );
  if (slowed.length > 0) reasons.push("slow");
  const out: RankingNoise = {
    uncertain: reasons.length > 0,
    reasons,
    best: b,
    runnerUp: n,
    apart,
    cores,
    usualProbeGBps: usual,
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
      ...(slowed.length > 0
        ? [`${slowed.join(", ")} (speed probe, usual ${usual!.toFixed(1)} GB/s)`]
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
  const probes = valid.flatMap(({ r }) => probeOf(r) ?? []);
  const usual = o.usualProbeGBps ?? (probes.length > 0 ? usualSpeed(probes) : undefined);
  const noise = rankingNoise(valid[0].r, valid[1]?.r, {
    ...o,
    ...(usual !== undefined ? { usualProbeGBps: usual } : {}),
  });
  if (usual === undefined || probes.length === 0) return noise;
  const slow = probes.filter((p) => p < SLOW_SPEED * usual).length;
  const out = { ...noise, slowTrials: { slow, probed: probes.length } };
  if (out.warning && noise.reasons.includes("slow")) {
    out.warning += `; ${slow} of ${probes.length} results timed slow`;
  }
  return out;
}

/**
 * The machine's usual speed among speed probes (GB/s): their 90th
 * percentile. A probe reads at most the machine's speed, so the high end is
 * the machine unhindered; a slow spell over most of a run still leaves it.
 *
 * @example
 * ```ts
 * import { usualSpeed } from "./ranking_noise.ts";
 * const probes = [40.6, 40.5, 21.1, 20.9, 40.6, 21.3, 40.4, 40.6, 21.0, 40.5];
 * if (usualSpeed(probes) !== 40.6) throw new Error(String(usualSpeed(probes)));
 * ```
 */
export function usualSpeed(probes: readonly number[]): number {
  return quantile(probes, 0.9);
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
  const usual = o.usualProbeGBps ?? usualAmong(ranked.map(({ r }) => r));
  return {
    ...rankingNoise(first.r, second?.r, {
      ...o,
      labels: [first.name, second?.name ?? "runner-up"],
      ...(usual !== undefined ? { usualProbeGBps: usual } : {}),
    }),
    strategies: [first.name, second?.name ?? null],
  };
}

/**
 * Fewest speed probes among a handful of results (strategies' final bests,
 * a task's finalists) to take their usual from; with fewer, nothing is
 * judged slow.
 */
export const MIN_PROBES_FOR_USUAL = 3;

/**
 * The usual speed ({@link usualSpeed}) among `results`' probes, when at
 * least {@link MIN_PROBES_FOR_USUAL} of them have one.
 *
 * @example
 * ```ts
 * import { usualAmong } from "./ranking_noise.ts";
 * const r = (p: number) => ({ seconds: 1, times: [1], conditions: { probeGBps: p } });
 * if (usualAmong([r(30), r(52), r(52)]) !== 52 || usualAmong([r(50), r(52)]) !== undefined) {
 *   throw new Error();
 * }
 * ```
 */
export function usualAmong(results: readonly RankedResult[]): number | undefined {
  const probes = results.flatMap((r) => probeOf(r) ?? []);
  return probes.length >= MIN_PROBES_FOR_USUAL ? usualSpeed(probes) : undefined;
}
