/**
 * XGBoost gradient-boosted trees as a {@link Regressor}, through Deno FFI to
 * the real library (Debian's `libxgboost0`, XGBoost 1.7; see
 * `_xgboost_ffi.ts`). Needs `--allow-ffi`.
 *
 * ```ts
 * import { join } from "node:path";
 * import { XGBoostRegressor } from "./xgboost.ts";
 * const rows = 128, cols = 2;
 * const data = Float32Array.from({ length: rows * cols }, (_, i) => (i * 7) % 11);
 * const y = Float32Array.from({ length: rows }, (_, i) => data[2 * i] - data[2 * i + 1]);
 * const r = new XGBoostRegressor({ objective: "rank:pairwise" });
 * r.fit({ data, rows, cols }, y, { groups: [32, 32, 64] });
 * const scores = r.predict({ data: data.slice(0, 8), rows: 4, cols });
 * const dir = await Deno.makeTempDir();
 * await r.save(join(dir, "model.json"));
 * r.dispose();
 * await Deno.remove(dir, { recursive: true });
 * console.log(scores.length); // 4
 * ```
 *
 * Model files are XGBoost's own, chosen by extension as XGBoost does:
 * a path ending `.json` gets XGBoost's JSON model (trees, objective, base
 * score, number of features; readable by any XGBoost ≥ 1.0), `.ubj` its
 * Universal Binary JSON, anything else its legacy binary format. Training
 * hyperparameters (depth, eta, ...) are not part of the model file; pass them
 * to {@link XGBoostRegressor.load} to keep training a loaded model.
 *
 * Calls block the calling thread. The default is one thread: training
 * 10,000 x 40 for 100 rounds took 0.40 s with one thread and 13 s with two
 * while another process kept one of our two cores busy (bench/costmodel_bench.ts,
 * same run): XGBoost's OpenMP threads wait for each other at every sync
 * point. On two idle cores two threads are only ~1.4x faster (0.36 s vs 0.5 s).
 * @module
 */
import { checkInteger, checkNumber, checkObject, checkString } from "../ir/check.ts";
import type { FitOptions, Matrix, Regressor } from "./regressor.ts";
import {
  boosterBoostedRounds,
  boosterCreate,
  boosterFree,
  boosterJsonConfig,
  boosterLoadModel,
  boosterNumFeature,
  boosterPredict,
  boosterSaveModel,
  boosterSetParam,
  boosterUpdateOneIter,
  dmatrixFree,
  dmatrixFromMat,
  dmatrixSetFloatInfo,
  dmatrixSetUIntInfo,
} from "./_xgboost_ffi.ts";

export { XGBoostError } from "./_xgboost_ffi.ts";

/** Learning objectives the cost model uses. */
export type XGBoostObjective = "reg:squarederror" | "rank:pairwise";

/** Options of {@link XGBoostRegressor}. */
export interface XGBoostOptions {
  /**
   * `"reg:squarederror"` (regress the targets, name `"xgb"`) or
   * `"rank:pairwise"` (learn their order within each group, name
   * `"xgb-rank"`). Default `"reg:squarederror"`.
   */
  objective?: XGBoostObjective;
  /** Maximum tree depth (`max_depth`). Default 3. */
  maxDepth?: number;
  /** Learning rate (`eta`). Default 0.3. */
  eta?: number;
  /** Boosting rounds per `fit` call (also when continuing). Default 100. */
  rounds?: number;
  /** Tree construction algorithm (`tree_method`). Default `"hist"`. */
  treeMethod?: "hist" | "approx" | "exact" | "auto";
  /** OpenMP threads XGBoost uses (`nthread`). Default 1 (see the module notes). */
  nthread?: number;
  /** Random seed (`seed`). Default 0. */
  seed?: number;
  /** Value meaning "missing" in input matrices. Default `NaN`. */
  missing?: number;
  /**
   * Further XGBoost parameters, set after the ones above (so they win), e.g.
   * `{ subsample: 0.8, verbosity: 0 }`. Default none.
   */
  params?: Record<string, string | number | boolean>;
}

/** {@link XGBoostOptions} with every default filled in: {@link XGBoostRegressor.options}. */
export type ResolvedXGBoostOptions = Required<Omit<XGBoostOptions, "params">> & {
  params: Record<string, string | number | boolean>;
};

function resolve(o: XGBoostOptions): ResolvedXGBoostOptions {
  checkObject(o, "XGBoost options");
  // Kinds only: ranges are XGBoost's to check (its message names the parameter).
  checkInteger(o.maxDepth, "maxDepth", { optional: true });
  checkNumber(o.eta, "eta", { optional: true });
  checkInteger(o.nthread, "nthread", { optional: true });
  checkInteger(o.seed, "seed", { optional: true });
  checkString(o.objective, "objective", { optional: true });
  return {
    objective: o.objective ?? "reg:squarederror",
    maxDepth: o.maxDepth ?? 3,
    eta: o.eta ?? 0.3,
    rounds: o.rounds ?? 100,
    treeMethod: o.treeMethod ?? "hist",
    nthread: o.nthread ?? 1,
    seed: o.seed ?? 0,
    missing: o.missing ?? NaN,
    params: o.params ?? {},
  };
}

/** A {@link Regressor} backed by an XGBoost booster (native memory: call `dispose`). */
export class XGBoostRegressor implements Regressor {
  /** `"xgb"` for regression, `"xgb-rank"` for ranking objectives. */
  readonly name: string;
  /** The resolved options (defaults filled in). */
  readonly options: Readonly<ResolvedXGBoostOptions>;
  #booster: Deno.PointerObject | null = null;
  #disposed = false;

  /** @param options hyperparameters; see {@link XGBoostOptions} for defaults. */
  /** Creates a booster with `options` (defaults as in {@link XGBoostOptions}); trained by `fit`. */
  constructor(options: XGBoostOptions = {}) {
    this.options = resolve(options);
    const r = this.options.rounds;
    if (!Number.isInteger(r) || r < 1) throw new RangeError(`rounds must be >= 1, got ${r}`);
    this.name = this.options.objective.startsWith("rank:") ? "xgb-rank" : "xgb";
  }

  /**
   * Loads a model written by {@link save} (or any XGBoost 1.x model file).
   * The objective (and so the name) comes from the file; `options` supply the
   * hyperparameters for further training and `nthread`.
   */
  static load(path: string, options: XGBoostOptions = {}): XGBoostRegressor {
    checkString(path, "path", { what: "a model file path" });
    const booster = boosterCreate();
    try {
      boosterLoadModel(booster, path);
      const config = JSON.parse(boosterJsonConfig(booster));
      const objective = config?.learner?.objective?.name ?? options.objective;
      const r = new XGBoostRegressor({ ...options, objective });
      r.#setParams(booster);
      r.#booster = booster;
      return r;
    } catch (e) {
      boosterFree(booster);
      throw e;
    }
  }

  /** Whether a model has been trained or loaded (and not disposed). */
  get fitted(): boolean {
    return this.#booster !== null;
  }

  /** Boosting rounds in the current model (0 before `fit`). */
  get boostedRounds(): number {
    return this.#booster === null ? 0 : boosterBoostedRounds(this.#booster);
  }

  /** Columns the current model expects (0 before `fit`). */
  get numFeatures(): number {
    return this.#booster === null ? 0 : boosterNumFeature(this.#booster);
  }

  /**
   * Trains `options.rounds` rounds on `x`/`y`: a new booster, or with
   * `continueTraining` (and a model present) more rounds on the existing one.
   * A failed fresh fit keeps the previous model.
   * @throws XGBoostError when XGBoost rejects the data or a parameter.
   */
  fit(x: Matrix, y: Float32Array, options: FitOptions = {}): void {
    this.#live();
    if (y.length !== x.rows) {
      throw new RangeError(`got ${y.length} targets for ${x.rows} rows`);
    }
    const groups = options.groups;
    if (groups !== undefined) {
      let sum = 0;
      for (const g of groups) {
        if (!Number.isInteger(g) || g < 1) throw new RangeError(`bad group size ${g}`);
        sum += g;
      }
      if (sum !== x.rows) throw new RangeError(`group sizes sum to ${sum}, not ${x.rows} rows`);
    }
    const dtrain = dmatrixFromMat(x.data, x.rows, x.cols, this.options.missing);
    try {
      dmatrixSetFloatInfo(dtrain, "label", y);
      if (groups !== undefined) dmatrixSetUIntInfo(dtrain, "group", Uint32Array.from(groups));
      const existing = options.continueTraining ? this.#booster : null;
      const booster = existing ?? boosterCreate([dtrain]);
      try {
        if (existing === null) this.#setParams(booster);
        const start = existing === null ? 0 : boosterBoostedRounds(booster);
        for (let i = 0; i < this.options.rounds; i++) {
          boosterUpdateOneIter(booster, start + i, dtrain);
        }
      } catch (e) {
        if (existing === null) boosterFree(booster);
        throw e;
      }
      if (existing === null) {
        if (this.#booster !== null) boosterFree(this.#booster);
        this.#booster = booster;
      }
    } finally {
      dmatrixFree(dtrain);
    }
  }

  /**
   * Scores every row of `x` in one native call; the result is a fresh array
   * (copied out of XGBoost's buffer).
   * @throws XGBoostError e.g. when `x` has more columns than the model.
   */
  predict(x: Matrix): Float32Array {
    const booster = this.#model();
    if (x.rows === 0) return new Float32Array(0);
    const dmat = dmatrixFromMat(x.data, x.rows, x.cols, this.options.missing);
    try {
      return boosterPredict(booster, dmat);
    } finally {
      dmatrixFree(dmat);
    }
  }

  /** Writes the model: XGBoost JSON for `.json`, UBJSON for `.ubj`, else binary. */
  save(path: string): Promise<void> {
    try {
      boosterSaveModel(this.#model(), path);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Frees the booster. Safe to call twice; any other use afterwards throws. */
  dispose(): void {
    if (this.#booster !== null) boosterFree(this.#booster);
    this.#booster = null;
    this.#disposed = true;
  }

  #live(): void {
    if (this.#disposed) throw new Error(`${this.name}: regressor was disposed`);
  }

  #model(): Deno.PointerObject {
    this.#live();
    if (this.#booster === null) throw new Error(`${this.name}: predict or save before fit`);
    return this.#booster;
  }

  #setParams(booster: Deno.PointerObject): void {
    const o = this.options;
    const params: [string, string | number | boolean][] = [
      ["objective", o.objective],
      ["max_depth", o.maxDepth],
      ["eta", o.eta],
      ["tree_method", o.treeMethod],
      ["nthread", o.nthread],
      ["seed", o.seed],
      ...Object.entries(o.params),
    ];
    for (const [k, v] of params) boosterSetParam(booster, k, String(v));
  }
}
