/**
 * One number per strategy and space, aggregated over budgets, and a ranking
 * across spaces. The score is the area under the mean fraction-of-optimum
 * curve over every budget from `lo` to `hi` evaluations, relative to random
 * search and to the optimum:
 *
 *   score = (A_strategy − A_random) / (A_optimum − A_random)
 *
 * where A sums the mean fraction at b = lo, lo+1, …, hi (A_optimum = hi − lo + 1):
 * 0 is random search, 1 finds the optimum at once, negative is worse than
 * random. On a replayed space the random curve is exact: the expected
 * fraction of optimum of b distinct uniform draws among the allowed points
 * ({@link expectedRandomFraction}), not a sampled estimate.
 *
 * @example
 * ```ts
 * import { budgetScore, expectedRandomFraction } from "./score.ts";
 * // Four allowed points, two valid (1 ms, 2 ms): one draw finds 1 ms with probability 1/4.
 * const f = expectedRandomFraction([1e-3, 2e-3], 4, 1);
 * if (Math.abs(f - (0.25 * 1 + 0.25 * 0.5)) > 1e-12) throw new Error();
 * if (budgetScore([1, 1], [0.5, 0.5]) !== 1) throw new Error();
 * ```
 * @module
 */
import { fractionAt, type RunTrace } from "./comparison.ts";

/**
 * Expected fraction of optimum (best / best found, 0 when nothing valid) of
 * `b` distinct uniform draws among `allowed` points, of which `times` (seconds)
 * are the valid ones.
 */
export function expectedRandomFraction(
  times: readonly number[],
  allowed: number,
  b: number,
): number {
  const t = [...times].sort((x, y) => x - y);
  const v = t.length;
  if (v === 0 || b <= 0) return 0;
  if (b > allowed) b = allowed;
  // P(none of the k best valid points drawn) = C(allowed − k, b) / C(allowed, b).
  let e = 0, prev = 1; // prev = P(best drawn rank >= k) for k = 0
  let acc = 0; // running log of P(none of the first k)
  for (let k = 1; k <= v; k++) {
    acc = allowed - k < b
      ? -Infinity
      : acc + Math.log((allowed - b - (k - 1)) / (allowed - (k - 1)));
    const none = Math.exp(acc);
    e += (prev - none) * (t[0] / t[k - 1]);
    prev = none;
    if (none === 0) break;
  }
  return e;
}

/** Mean fraction of optimum of runs (one per seed) at every budget from `lo` to `hi`. */
export function meanCurve(
  runs: readonly RunTrace[],
  optimum: number,
  lo: number,
  hi: number,
): number[] {
  const out: number[] = [];
  for (let b = lo; b <= hi; b++) {
    out.push(runs.reduce((s, r) => s + fractionAt(r, b, optimum), 0) / Math.max(1, runs.length));
  }
  return out;
}

/** The budget-aggregated score of a mean curve against the random curve (same budgets). */
export function budgetScore(curve: readonly number[], random: readonly number[]): number {
  const a = curve.reduce((s, x) => s + x, 0);
  const r = random.reduce((s, x) => s + x, 0);
  const top = curve.length;
  return top - r > 1e-12 ? (a - r) / (top - r) : 0;
}

/** A strategy's place across spaces. */
export interface RankRow {
  /** The strategy's name. */
  strategy: string;
  /** Mean over spaces of its rank by score on each space (1: best; ties share the mean rank). */
  mean_rank: number;
  /** Mean score over spaces. */
  mean_score: number;
  /** Score on each space, by space name. */
  scores: Record<string, number>;
}

/** Ranks strategies by mean rank of their score over spaces (then by mean score). */
export function rankAcrossSpaces(scores: Record<string, Record<string, number>>): RankRow[] {
  const spaces = Object.keys(scores);
  const names = [...new Set(spaces.flatMap((s) => Object.keys(scores[s])))];
  const rank: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const sp of spaces) {
    const entries = Object.entries(scores[sp]).sort((a, b) => b[1] - a[1]);
    for (let i = 0; i < entries.length;) {
      let j = i;
      while (j + 1 < entries.length && entries[j + 1][1] === entries[i][1]) j++;
      for (let k = i; k <= j; k++) rank[entries[k][0]].push((i + j) / 2 + 1);
      i = j + 1;
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return names.map((n) => ({
    strategy: n,
    mean_rank: mean(rank[n]),
    mean_score: mean(spaces.filter((s) => n in scores[s]).map((s) => scores[s][n])),
    scores: Object.fromEntries(spaces.filter((s) => n in scores[s]).map((s) => [s, scores[s][n]])),
  })).sort((a, b) => a.mean_rank - b.mean_rank || b.mean_score - a.mean_score);
}

/** Renders a ranking as a Markdown table: one column per space, then mean score and mean rank. */
export function rankTable(rows: readonly RankRow[]): string {
  const spaces = [...new Set(rows.flatMap((r) => Object.keys(r.scores)))];
  const cell = (x: number | undefined) => (x === undefined ? "" : x.toFixed(3));
  return [
    `| strategy | ${spaces.join(" | ")} | mean score | mean rank |`,
    `| --- | ${spaces.map(() => "---").join(" | ")} | --- | --- |`,
    ...rows.map((r) =>
      `| ${r.strategy} | ${spaces.map((s) => cell(r.scores[s])).join(" | ")} | ${
        r.mean_score.toFixed(3)
      } | ${r.mean_rank.toFixed(2)} |`
    ),
  ].join("\n");
}
