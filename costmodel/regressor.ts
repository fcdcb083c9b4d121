/**
 * The learner behind a learned cost model: fits a feature matrix to targets
 * and predicts in batches. XGBoost (through FFI) and an MLP (tfjs)
 * implement it; the cost model adds features and target scaling.
 * @module
 */

/** A dense row-major float32 matrix. */
export interface Matrix {
  /** Values, row-major: row r, column c at `r * cols + c`. */
  data: Float32Array;
  /** Number of rows. */
  rows: number;
  /** Number of columns. */
  cols: number;
}

/** Options of one `fit` call. */
export interface FitOptions {
  /**
   * Query groups for ranking objectives: sizes of consecutive row groups
   * (rows of one group are ranked against each other). Default: one group.
   */
  groups?: number[];
  /** Continue from the current model instead of starting afresh. Default false. */
  continueTraining?: boolean;
}

/** A regression or ranking learner. */
export interface Regressor {
  /** Name for tables, e.g. `"xgb"`, `"xgb-rank"`, `"mlp"`. */
  readonly name: string;
  /** Learns from `x` (rows x cols) and targets `y` (one per row). */
  fit(x: Matrix, y: Float32Array, options?: FitOptions): void | Promise<void>;
  /** Scores rows of `x`; higher means faster when targets are throughputs. */
  predict(x: Matrix): Float32Array | Promise<Float32Array>;
  /** Writes the model to `path` (the format is the learner's own). */
  save(path: string): Promise<void>;
  /** Frees native or GPU memory; the regressor is unusable afterwards. */
  dispose(): void;
}
