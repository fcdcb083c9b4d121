/**
 * A Gaussian process over a pool of candidate points, updated one
 * observation at a time, for Bayesian optimization over spaces of 100,000
 * points: the posterior is only ever needed on the pool, so the process keeps
 * V = L⁻¹·K(X, pool) (L the Cholesky factor of the observed points' kernel
 * matrix). An observation adds one row of L (O(n²)) and one row of V (O(n·m));
 * a pool point adds one column (O(n²)); the posterior variance of a pool point
 * is 1 − Σ V², kept as a running sum, and the mean is V'·(L⁻¹y), O(n·m).
 *
 * The kernel is Matérn 5/2 with one length scale on unit coordinates, unit
 * signal variance (targets are standardized) and a noise variance (a nugget:
 * performance landscapes are rugged). {@link PoolGP.fit} picks the length
 * scale and nugget from a grid by marginal likelihood.
 *
 * @example
 * ```ts
 * import { PoolGP } from "./gp.ts";
 * const gp = new PoolGP(1);
 * gp.addPool([Float64Array.of(0), Float64Array.of(0.5), Float64Array.of(1)]);
 * gp.observe(Float64Array.of(0), 1);
 * gp.observe(Float64Array.of(1), 3);
 * const { mean, sd } = gp.posterior();
 * if (!(mean[0] < mean[2] && sd[1] > sd[0])) throw new Error();
 * ```
 * @module
 */

/** Options of a {@link PoolGP}. */
export interface PoolGPOptions {
  /** Length scale on unit coordinates. Default 0.5. */
  lengthScale?: number;
  /** Noise variance relative to the (unit) signal variance. Default 0.01. */
  noise?: number;
}

/** Matérn 5/2 correlation at distance r (in length scales). */
function matern52(r: number): number {
  const s = Math.sqrt(5) * r;
  return (1 + s + (s * s) / 3) * Math.exp(-s);
}

/** A Gaussian process whose posterior is kept on a pool of points. */
export class PoolGP {
  /** Length scale in use. */
  lengthScale: number;
  /** Noise variance in use. */
  noise: number;
  /**
   * Weight of each coordinate in the squared distance (all 1 when undefined): a weight of 0
   * ignores a coordinate, so one process can hold several encodings of a point and
   * {@link PoolGP.fit} choose among them. Default undefined.
   */
  weights?: Float64Array;
  private xs: Float64Array[] = [];
  private ys: number[] = [];
  /** Rows of the Cholesky factor (row i has i + 1 entries). */
  private L: Float64Array[] = [];
  private pool: Float64Array[] = [];
  /** Column of V per pool point (capacity grows). */
  private cols: Float64Array[] = [];
  private sumSq: number[] = [];
  private cap = 64;

  /** A process over points of `dim` unit coordinates. */
  constructor(readonly dim: number, o: PoolGPOptions = {}) {
    this.lengthScale = o.lengthScale ?? 0.5;
    this.noise = o.noise ?? 0.01;
  }

  /** Observations so far. */
  get size(): number {
    return this.xs.length;
  }

  /** Points in the pool. */
  get poolSize(): number {
    return this.pool.length;
  }

  /** The kernel between two points. */
  k(a: Float64Array, b: Float64Array): number {
    let d = 0;
    const w = this.weights;
    if (w) { for (let i = 0; i < a.length; i++) d += w[i] * (a[i] - b[i]) ** 2; }
    else for (let i = 0; i < a.length; i++) d += (a[i] - b[i]) ** 2;
    return matern52(Math.sqrt(d) / this.lengthScale);
  }

  /** Adds points to the pool; returns the index of the first. */
  addPool(points: Float64Array[]): number {
    const first = this.pool.length;
    for (const p of points) {
      this.pool.push(p);
      const col = new Float64Array(this.cap);
      this.solveInto(p, col);
      let s = 0;
      for (let i = 0; i < this.xs.length; i++) s += col[i] * col[i];
      this.cols.push(col);
      this.sumSq.push(s);
    }
    return first;
  }

  /** Forward substitution: out[0..n) = L⁻¹·k(X, p). */
  private solveInto(p: Float64Array, out: Float64Array): void {
    for (let i = 0; i < this.xs.length; i++) {
      const row = this.L[i];
      let s = this.k(this.xs[i], p);
      for (let j = 0; j < i; j++) s -= row[j] * out[j];
      out[i] = s / row[i];
    }
  }

  /** Adds an observation (`y` on any scale: the posterior standardizes targets). */
  observe(x: Float64Array, y: number): void {
    const n = this.xs.length;
    const l = new Float64Array(n + 1);
    this.solveInto(x, l);
    let d = 1 + this.noise;
    for (let j = 0; j < n; j++) d -= l[j] * l[j];
    l[n] = Math.sqrt(Math.max(d, 1e-10));
    this.L.push(l);
    this.xs.push(x);
    this.ys.push(y);
    if (n + 1 > this.cap) {
      this.cap *= 2;
      this.cols = this.cols.map((c) => {
        const g = new Float64Array(this.cap);
        g.set(c.subarray(0, n));
        return g;
      });
    }
    for (let p = 0; p < this.pool.length; p++) {
      const col = this.cols[p];
      let s = this.k(x, this.pool[p]);
      for (let j = 0; j < n; j++) s -= l[j] * col[j];
      const v = s / l[n];
      col[n] = v;
      this.sumSq[p] += v * v;
    }
  }

  /**
   * Targets above this value are read as this value by the posterior (and the likelihood): the
   * model then spends its variation on the good region, not on how bad the bad points are.
   * Default Infinity (no clipping).
   */
  clipAbove = Infinity;

  /**
   * A monotone map of all targets applied before the posterior (and the likelihood) reads them,
   * after {@link PoolGP.clipAbove}: e.g. {@link normalScores}. Default none.
   */
  transform?: (ys: readonly number[]) => number[];

  /** The targets as the posterior reads them (clipped, then transformed). */
  targets(): number[] {
    const c = this.clipAbove;
    const ys = Number.isFinite(c) ? this.ys.map((y) => Math.min(y, c)) : this.ys;
    return this.transform ? this.transform(ys) : ys;
  }

  /** Mean and standard deviation of the targets (standardization). */
  private scale(): { mu: number; sigma: number } {
    const ys = this.targets();
    const n = ys.length;
    if (n === 0) return { mu: 0, sigma: 1 };
    const mu = ys.reduce((a, b) => a + b, 0) / n;
    const v = ys.reduce((a, b) => a + (b - mu) ** 2, 0) / n;
    return { mu, sigma: v > 0 ? Math.sqrt(v) : 1 };
  }

  /** L⁻¹·(standardized y). */
  private whitened(mu: number, sigma: number): Float64Array {
    const ys = this.targets();
    const n = ys.length;
    const a = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let s = (ys[i] - mu) / sigma;
      const row = this.L[i];
      for (let j = 0; j < i; j++) s -= row[j] * a[j];
      a[i] = s / row[i];
    }
    return a;
  }

  /** Posterior mean and standard deviation of every pool point, in the targets' units. */
  posterior(): { mean: Float64Array; sd: Float64Array } {
    const { mu, sigma } = this.scale();
    const a = this.whitened(mu, sigma);
    const n = a.length, m = this.pool.length;
    const mean = new Float64Array(m), sd = new Float64Array(m);
    for (let p = 0; p < m; p++) {
      const col = this.cols[p];
      let s = 0;
      for (let i = 0; i < n; i++) s += col[i] * a[i];
      mean[p] = mu + sigma * s;
      sd[p] = sigma * Math.sqrt(Math.max(1e-12, 1 - this.sumSq[p]));
    }
    return { mean, sd };
  }

  /** Log marginal likelihood of the standardized targets under the current kernel. */
  logLikelihood(): number {
    const { mu, sigma } = this.scale();
    const a = this.whitened(mu, sigma);
    let ll = 0;
    for (let i = 0; i < a.length; i++) ll -= 0.5 * a[i] * a[i] + Math.log(this.L[i][i]);
    return ll;
  }

  /** Recomputes the factor and pool columns (after a change of kernel). */
  private rebuild(): void {
    const xs = this.xs, ys = this.ys;
    this.xs = [];
    this.ys = [];
    this.L = [];
    for (let i = 0; i < xs.length; i++) {
      const l = new Float64Array(i + 1);
      this.solveInto(xs[i], l);
      let d = 1 + this.noise;
      for (let j = 0; j < i; j++) d -= l[j] * l[j];
      l[i] = Math.sqrt(Math.max(d, 1e-10));
      this.L.push(l);
      this.xs.push(xs[i]);
      this.ys.push(ys[i]);
    }
    while (this.cap < xs.length) this.cap *= 2;
    this.cols = this.pool.map((p) => {
      const col = new Float64Array(this.cap);
      this.solveInto(p, col);
      return col;
    });
    this.sumSq = this.cols.map((c) => {
      let s = 0;
      for (let i = 0; i < xs.length; i++) s += c[i] * c[i];
      return s;
    });
  }

  /**
   * Picks the length scale, noise and coordinate weights (each of `weightSets`; default the
   * current weights only) of the grid with the best marginal likelihood, then rebuilds.
   */
  fit(
    lengthScales: readonly number[],
    noises: readonly number[],
    weightSets: readonly (Float64Array | undefined)[] = [this.weights],
  ): void {
    if (this.xs.length < 2) return;
    const pool = this.pool, cols = this.cols;
    this.pool = [];
    this.cols = [];
    let best = -Infinity, bestL = this.lengthScale, bestN = this.noise, bestW = this.weights;
    for (const w of weightSets) {
      this.weights = w;
      for (const ls of lengthScales) {
        for (const nz of noises) {
          this.lengthScale = ls;
          this.noise = nz;
          this.rebuild();
          const ll = this.logLikelihood();
          if (ll > best) [best, bestL, bestN, bestW] = [ll, ls, nz, w];
        }
      }
    }
    this.pool = pool;
    this.cols = cols;
    this.lengthScale = bestL;
    this.noise = bestN;
    this.weights = bestW;
    this.rebuild();
  }
}

/** Standard normal density. */
export function normalPdf(z: number): number {
  return Math.exp(-0.5 * z * z) / Math.sqrt(2 * Math.PI);
}

/** Standard normal distribution function (Abramowitz-Stegun 7.1.26 on erf, error < 1.5e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const y = 1 -
    (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t +
        0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? 0.5 * (1 + y) : 0.5 * (1 - y);
}

/**
 * Normal scores of values (a rank, or copula, transform): the i-th smallest of n becomes the
 * standard normal quantile of (i + 0.5) / n, ties share their mean rank. A Gaussian process on
 * these reads only the order of the costs, so a few very slow configurations cannot stretch its
 * scale (as SMAC's log-rank and HEBO's output warping do).
 *
 * @example
 * ```ts
 * import { normalScores } from "./gp.ts";
 * const z = normalScores([10, 1, 1000]);
 * if (!(z[1] < 0 && z[0] === 0 && z[2] === -z[1])) throw new Error();
 * ```
 */
export function normalScores(ys: readonly number[]): number[] {
  const n = ys.length;
  const order = [...ys.keys()].sort((a, b) => ys[a] - ys[b]);
  const out = new Array<number>(n);
  for (let i = 0; i < n;) {
    let j = i;
    while (j + 1 < n && ys[order[j + 1]] === ys[order[i]]) j++;
    const z = normalQuantile(((i + j) / 2 + 0.5) / n);
    for (let k = i; k <= j; k++) out[order[k]] = z;
    i = j + 1;
  }
  return out;
}

/** Standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9). */
export function normalQuantile(p: number): number {
  const a = [
    -39.69683028665376,
    220.9460984245205,
    -275.9285104469687,
    138.357751867269,
    -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406,
    161.5858368580409,
    -155.6989798598866,
    66.80131188771972,
    -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293,
    -0.3223964580411365,
    -2.400758277161838,
    -2.549732539343734,
    4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  if (p <= 0) return -Infinity;
  if (p >= 1) return Infinity;
  if (p === 0.5) return 0;
  const lo = 0.02425;
  if (p < lo || p > 1 - lo) {
    const q = Math.sqrt(-2 * Math.log(p < lo ? p : 1 - p));
    const x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
      ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    return p < lo ? x : -x;
  }
  const q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}
