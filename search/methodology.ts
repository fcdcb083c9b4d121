/**
 * The methodology score of Willemsen et al., "A Methodology for Comparing
 * Optimization Algorithms for Auto-Tuning" (FGCS 2024; the
 * `autotuning_methodology` package, branch standardization, as Kernel Tuner's
 * hyperparameter tuner calls it), reimplemented from
 * `shared/guide/methodology.md`. Cite that paper when you report it.
 *
 * Per search space, from the exhaustively recorded configurations:
 *
 * 1. **Time range** ({@link methodologyRange}). N valid values, d_w sorted
 *    worst to best. The target at percentile p is
 *    v(p) = opt + (median − opt)(1 − p); i(p) is the first index of d_w at
 *    least as good as v(p) (one less when that is the optimum and p ≠ 1);
 *    F(p) = ceil(i / (N + 1 − i)) random draws reach it, and
 *    T(p) = F(p) × the median recorded time per configuration (invalid ones
 *    included). The grid is `resolution` points from T(p_start) to T(p), ends
 *    included; the budget a strategy gets is (1 + margin) T(p).
 * 2. **Baseline** ({@link baselineCurve}): the expected best of M random
 *    draws without replacement, d_w[min(N − 1, round(M (N + 1) / (M + 1)))],
 *    at M = round(max(t / τ, 1)), smoothed by a PCHIP curve through the
 *    distinct (M, value) points; τ = mean time of a valid configuration +
 *    (invalid / all) × mean time of an invalid one.
 * 3. **Curve** ({@link performanceCurve}): every run's (clock, best so far)
 *    points within the grid widened by a margin m = 0.1 + 0.25 / rows, pooled,
 *    the values replaced by their ranks among the valid values (ties to the
 *    lowest), fitted by a bagged isotonic regression (max(R, 3) estimators,
 *    each on a bootstrap draw of 1/√estimators of the points), whose mean is
 *    rounded to a rank and mapped back to a value. After the stopping point
 *    (the smallest run end above the median run end) the curve stays at its
 *    value there.
 * 4. **Score**: per grid point, S = (curve − baseline) / (optimum − baseline);
 *    averaged over spaces by grid index, then over the grid
 *    ({@link methodologyScore}): 0 is random search at equal time, 1 the
 *    optimum from the start, below 0 worse than random.
 *
 * The package's bagging is unseeded; here it draws from a seeded generator
 * (`seed`, default 0), so a score is reproducible. The package also re-runs a
 * strategy whose run has too few evaluations in the range; here every run
 * counts. Values are minimised (times).
 *
 * @example
 * ```ts
 * import { baselineCurve, methodologyRange, performanceCurve, spaceScore } from "./methodology.ts";
 * // 19 valid configurations of 1..19 ms, each costing 1 s to measure.
 * const values = Array.from({ length: 19 }, (_, i) => i + 1);
 * const space = { values, validSeconds: values.map(() => 1), invalidSeconds: [] };
 * const range = methodologyRange(space, { resolution: 6 });
 * const base = baselineCurve(space, range); // 9, 6, 4, 3, 2, 2 ms
 * // Runs that find the optimum at once score 1.
 * const best = performanceCurve([{ time: [1, 7], best: [1, 1] }], space, range);
 * console.log(range.tStart, range.tEnd, spaceScore(best, base, 1)); // 1 6 1
 * ```
 * @module
 */
import { createPrng } from "../ir/prng.ts";

/** What the methodology needs of a recorded space. */
export interface SpaceRecord {
  /** Objective value of every valid configuration (lower is better). */
  values: readonly number[];
  /** Recorded seconds of measuring each valid configuration. */
  validSeconds: readonly number[];
  /** Recorded seconds of measuring each invalid configuration (failed to compile or run). */
  invalidSeconds: readonly number[];
}

/** Settings of the time range (the defaults are Kernel Tuner's hyperparameter tuner's). */
export interface RangeOptions {
  /** Percentile of the end of the range (default 0.95). */
  percentile?: number;
  /** Percentile of its start (default 0.01; 0 starts at 0 s). */
  percentileStart?: number;
  /** Grid points (default 1000). */
  resolution?: number;
  /** The budget's margin over the end of the range (default 0.1). */
  margin?: number;
}

/** The time range of a space and what it derives from. */
export interface TimeRange {
  /** Best valid value. */
  optimum: number;
  /** Median of the valid values. */
  median: number;
  /** Valid configurations. */
  n: number;
  /** Random draws to reach the start and the end targets. */
  fStart: number;
  fEnd: number;
  /** Seconds at the start and end of the range. */
  tStart: number;
  tEnd: number;
  /** Tuning-time budget of a run: (1 + margin) tEnd. */
  timeLimit: number;
  /** The baseline's seconds per evaluation (τ). */
  tau: number;
  /** Median recorded seconds per configuration (valid and invalid). */
  medianSeconds: number;
  /** The grid: `resolution` times from tStart to tEnd, ends included. */
  grid: number[];
}

/** One run on the tuning clock. */
export interface ClockRun {
  /** Clock seconds after each evaluation. */
  time: readonly number[];
  /** Best value so far after each evaluation (not finite before the first valid one). */
  best: readonly number[];
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = Math.floor(s.length / 2);
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** Python's and NumPy's round: halves to even. */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

function check(space: SpaceRecord): void {
  if (space.values.length === 0) throw new RangeError("space.values must hold a valid value");
  if (space.validSeconds.length !== space.values.length) {
    throw new RangeError(
      `space.validSeconds has ${space.validSeconds.length} entries and space.values ${space.values.length}`,
    );
  }
}

/**
 * The time range of a space (see the module doc, step 1).
 *
 * @throws {RangeError} for an empty space or a percentile outside [0, 1]
 */
export function methodologyRange(space: SpaceRecord, o: RangeOptions = {}): TimeRange {
  check(space);
  const p = o.percentile ?? 0.95, p0 = o.percentileStart ?? 0.01;
  const resolution = o.resolution ?? 1000, margin = o.margin ?? 0.1;
  for (const [name, x] of [["percentile", p], ["percentileStart", p0]] as const) {
    if (!(x >= 0 && x <= 1)) throw new RangeError(`${name} must be in [0, 1], got ${x}`);
  }
  if (!(p0 < p)) throw new RangeError(`percentileStart (${p0}) must be below percentile (${p})`);
  if (!Number.isInteger(resolution) || resolution < 2) {
    throw new RangeError(`resolution must be an integer >= 2, got ${resolution}`);
  }
  const worstFirst = [...space.values].sort((a, b) => b - a);
  const n = worstFirst.length;
  const optimum = worstFirst[n - 1];
  const med = median(space.values);
  const draws = (q: number): number => {
    const target = optimum + (med - optimum) * (1 - q);
    let i = worstFirst.findIndex((x) => x <= target);
    if (q !== 1 && worstFirst[i] === optimum && i > 0) i--;
    return Math.ceil(i / (n + 1 - i));
  };
  const all = [...space.validSeconds, ...space.invalidSeconds];
  const medianSeconds = median(all);
  let fStart = p0 === 0 ? 0 : draws(p0);
  let fEnd = draws(p);
  if (fEnd - fStart < 2) {
    fStart = Math.max(0, fStart - 1);
    fEnd = fStart + 2;
  }
  const tStart = fStart * medianSeconds, tEnd = fEnd * medianSeconds;
  const grid = Array.from(
    { length: resolution },
    (_, k) => tStart + (tEnd - tStart) * k / (resolution - 1),
  );
  const inv = space.invalidSeconds;
  const tau = mean(space.validSeconds) +
    (inv.length > 0 ? (inv.length / all.length) * mean(inv) : 0);
  return {
    optimum,
    median: med,
    n,
    fStart,
    fEnd,
    tStart,
    tEnd,
    timeLimit: (1 + margin) * tEnd,
    tau,
    medianSeconds,
    grid,
  };
}

/** Monotone cubic (PCHIP, SciPy's end conditions) through (x, y), x increasing, evaluated at `at`. */
export function pchip(x: readonly number[], y: readonly number[], at: readonly number[]): number[] {
  const n = x.length;
  if (n !== y.length || n < 2) throw new RangeError(`pchip needs >= 2 points, got ${n}`);
  const h = x.slice(1).map((xi, k) => xi - x[k]);
  const delta = h.map((hk, k) => (y[k + 1] - y[k]) / hk);
  const d = new Array<number>(n).fill(0);
  if (n === 2) d[0] = d[1] = delta[0];
  else {
    for (let k = 1; k < n - 1; k++) {
      if (delta[k - 1] * delta[k] <= 0) continue;
      const w1 = 2 * h[k] + h[k - 1], w2 = h[k] + 2 * h[k - 1];
      d[k] = (w1 + w2) / (w1 / delta[k - 1] + w2 / delta[k]);
    }
    const edge = (h0: number, h1: number, m0: number, m1: number) => {
      const e = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1);
      if (Math.sign(e) !== Math.sign(m0)) return 0;
      if (Math.sign(m0) !== Math.sign(m1) && Math.abs(e) > 3 * Math.abs(m0)) return 3 * m0;
      return e;
    };
    d[0] = edge(h[0], h[1], delta[0], delta[1]);
    d[n - 1] = edge(h[n - 2], h[n - 3], delta[n - 2], delta[n - 3]);
  }
  return at.map((t) => {
    let k = 0;
    let lo = 0, hi = n - 2;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (x[mid] <= t) {
        k = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    const s = (t - x[k]) / h[k];
    const h00 = (1 + 2 * s) * (1 - s) ** 2, h10 = s * (1 - s) ** 2;
    const h01 = s * s * (3 - 2 * s), h11 = s * s * (s - 1);
    return h00 * y[k] + h10 * h[k] * d[k] + h01 * y[k + 1] + h11 * h[k] * d[k + 1];
  });
}

/**
 * The calculated random-search baseline on the range's grid (module doc, step 2).
 */
export function baselineCurve(space: SpaceRecord, range: TimeRange): number[] {
  check(space);
  const worstFirst = [...space.values].sort((a, b) => b - a);
  const n = worstFirst.length;
  const drawn = (m: number) => worstFirst[Math.min(n - 1, roundHalfEven(m * (n + 1) / (m + 1)))];
  const ms = range.grid.map((t) => roundHalfEven(Math.max(t / range.tau, 1)));
  const xs = [...new Set(ms)].sort((a, b) => a - b);
  if (xs.length < 2) return ms.map(drawn);
  const k = ms.length;
  const at = Array.from({ length: k }, (_, i) => ms[0] + (ms[k - 1] - ms[0]) * i / (k - 1));
  return pchip(xs, xs.map(drawn), at);
}

/**
 * Isotonic (non-increasing) least-squares fit of weighted points, evaluated
 * at `at` by linear interpolation between the fitted points and clipped
 * outside them (scikit-learn's IsotonicRegression(increasing=False,
 * out_of_bounds="clip")). Equal x are merged first (weighted mean).
 */
export function isotonicDecreasing(
  x: readonly number[],
  y: readonly number[],
  w: readonly number[],
  at: readonly number[],
): number[] {
  const order = x.map((_, i) => i).sort((a, b) => x[a] - x[b]);
  const ux: number[] = [], uy: number[] = [], uw: number[] = [];
  for (const i of order) {
    if (w[i] <= 0) continue;
    const last = ux.length - 1;
    if (last >= 0 && ux[last] === x[i]) {
      uy[last] = (uy[last] * uw[last] + y[i] * w[i]) / (uw[last] + w[i]);
      uw[last] += w[i];
    } else {
      ux.push(x[i]);
      uy.push(y[i]);
      uw.push(w[i]);
    }
  }
  if (ux.length === 0) throw new RangeError("isotonicDecreasing needs a point of positive weight");
  // Pool adjacent violators on -y (non-decreasing).
  const val: number[] = [], wt: number[] = [], len: number[] = [];
  for (let i = 0; i < ux.length; i++) {
    val.push(-uy[i]);
    wt.push(uw[i]);
    len.push(1);
    while (val.length > 1 && val[val.length - 2] > val[val.length - 1]) {
      const v1 = val.pop()!, w1 = wt.pop()!, l1 = len.pop()!;
      const j = val.length - 1;
      val[j] = (val[j] * wt[j] + v1 * w1) / (wt[j] + w1);
      wt[j] += w1;
      len[j] += l1;
    }
  }
  const fit: number[] = [];
  val.forEach((v, j) => {
    for (let l = 0; l < len[j]; l++) fit.push(-v);
  });
  return at.map((t) => {
    if (t <= ux[0]) return fit[0];
    if (t >= ux[ux.length - 1]) return fit[fit.length - 1];
    let lo = 0, hi = ux.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (ux[mid] <= t) lo = mid;
      else hi = mid;
    }
    return fit[lo] + (fit[hi] - fit[lo]) * (t - ux[lo]) / (ux[hi] - ux[lo]);
  });
}

/** Options of {@link performanceCurve}. */
export interface CurveOptions {
  /** Seed of the bagging's draws (default 0). */
  seed?: number;
}

/**
 * A strategy's performance curve on the range's grid from its runs (module
 * doc, step 3): values of the space, one per grid point.
 *
 * @throws {RangeError} when no run has a valid point within the range
 */
export function performanceCurve(
  runs: readonly ClockRun[],
  space: SpaceRecord,
  range: TimeRange,
  o: CurveOptions = {},
): number[] {
  check(space);
  const ascending = [...space.values].sort((a, b) => a - b);
  const n = ascending.length;
  const rankOf = (v: number) => {
    let lo = 0, hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ascending[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    return Math.min(lo, n - 1);
  };
  const ends: number[] = [];
  let rows = 0;
  for (const r of runs) {
    rows = Math.max(rows, r.time.length);
    let end = NaN;
    r.best.forEach((b, i) => {
      if (Number.isFinite(b)) end = r.time[i];
    });
    if (!Number.isNaN(end)) ends.push(end);
  }
  const m = 0.1 + 0.25 / Math.max(1, rows);
  const lo = range.tStart * (1 - m), hi = range.tEnd * (1 + m);
  const xs: number[] = [], ys: number[] = [];
  for (const r of runs) {
    r.best.forEach((b, i) => {
      const t = r.time[i];
      if (Number.isFinite(b) && t >= lo && t <= hi) {
        xs.push(t);
        ys.push(rankOf(b));
      }
    });
  }
  if (xs.length === 0) {
    throw new RangeError(
      `no run has a valid evaluation within the time range ${lo.toFixed(3)}..${hi.toFixed(3)} s`,
    );
  }
  const estimators = Math.max(runs.length, 3);
  const draws = Math.max(1, Math.floor(xs.length / Math.sqrt(estimators)));
  const prng = createPrng(o.seed ?? 0);
  const sum = new Array<number>(range.grid.length).fill(0);
  const w = new Array<number>(xs.length);
  for (let e = 0; e < estimators; e++) {
    w.fill(0);
    for (let k = 0; k < draws; k++) w[prng.int(xs.length)]++;
    isotonicDecreasing(xs, ys, w, range.grid).forEach((v, k) => sum[k] += v);
  }
  const curve = sum.map((s) =>
    ascending[Math.min(n - 1, Math.max(0, roundHalfEven(s / estimators)))]
  );
  // The stopping point: the smallest run end above the median run end.
  const mid = ends.length > 0 ? median(ends) : Infinity;
  const later = ends.filter((t) => t > mid);
  const stop = later.length > 0 ? Math.min(...later) : range.grid[range.grid.length - 1];
  const from = range.grid.findIndex((t) => t > stop);
  if (from >= 0) { for (let k = from + 1; k < curve.length; k++) curve[k] = curve[from]; }
  return curve;
}

/**
 * The standardised curve of a space: (curve − baseline) / (optimum − baseline)
 * at each grid point; 0 where the baseline is already the optimum.
 */
export function standardisedCurve(
  curve: readonly number[],
  baseline: readonly number[],
  optimum: number,
): number[] {
  if (curve.length !== baseline.length) {
    throw new RangeError(`curve has ${curve.length} points and baseline ${baseline.length}`);
  }
  return curve.map((c, k) => {
    const den = optimum - baseline[k];
    return den === 0 ? 0 : (c - baseline[k]) / den;
  });
}

/** The score of one space: the mean of its standardised curve. */
export function spaceScore(
  curve: readonly number[],
  baseline: readonly number[],
  optimum: number,
): number {
  return mean(standardisedCurve(curve, baseline, optimum));
}

/**
 * The methodology score across spaces: the standardised curves averaged by
 * grid index, then over the grid; `error` is the standard deviation over the
 * grid of that average (module doc, step 4).
 *
 * @example
 * ```ts
 * import { methodologyScore } from "./methodology.ts";
 * const s = methodologyScore([[0, 1], [1, 1]]);
 * if (s.score !== 0.75 || Math.abs(s.error - 0.25) > 1e-12) throw new Error();
 * ```
 * @throws {RangeError} when there is no curve or they differ in length
 */
export function methodologyScore(
  curves: readonly (readonly number[])[],
): { score: number; error: number } {
  if (curves.length === 0) throw new RangeError("methodologyScore needs a curve");
  const k = curves[0].length;
  if (curves.some((c) => c.length !== k)) throw new RangeError("the curves differ in length");
  const a = Array.from({ length: k }, (_, i) => mean(curves.map((c) => c[i])));
  const mu = mean(a);
  return { score: mu, error: Math.sqrt(mean(a.map((x) => (x - mu) ** 2))) };
}
