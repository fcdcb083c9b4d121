/**
 * A multilayer-perceptron {@link Regressor} on TensorFlow.js's pure-JS `cpu`
 * backend: dense layers with a seeded initialisation, Adam, minibatches drawn
 * by a seeded shuffle, and either a squared-error or a pairwise ranking loss.
 * Inputs (and, for the squared error, targets) are standardised with
 * statistics taken at the first fit and kept with the model.
 *
 * Importing this module selects the `cpu` backend and TensorFlow.js's
 * production mode (which silences its console advice to install tfjs-node).
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { MLPRegressor } from "./mlp.ts";
 * const x = { data: new Float32Array([0, 1, 2, 3]), rows: 4, cols: 1 };
 * const mlp = new MLPRegressor({ epochs: 5, seed: 1 });
 * mlp.fit(x, new Float32Array([0, 2, 4, 6]));
 * const scores = mlp.predict(x); // Float32Array(4)
 * const dir = await Deno.makeTempDir();
 * await mlp.save(join(dir, "mlp.json"));
 * mlp.dispose();
 * await Deno.remove(dir, { recursive: true });
 * console.log(scores.length); // 4
 * ```
 * @module
 */
import * as tf from "npm:@tensorflow/tfjs@4.22.0";
import { withDefaults } from "../ir/options.ts";
import { createPrng, type Prng } from "../ir/prng.ts";
import type { FitOptions, Matrix, Regressor } from "./regressor.ts";

tf.enableProdMode();
await tf.setBackend("cpu");
if (tf.getBackend() !== "cpu") throw new Error("tfjs: the cpu backend could not be selected");

/** Activation of the hidden layers. */
export type MLPActivation = "relu" | "elu" | "tanh";

/** Training loss of an {@link MLPRegressor}. */
export type MLPLoss = "mse" | "rank";

/** Options of an {@link MLPRegressor}; every field is optional. */
export interface MLPOptions {
  /** Widths of the hidden layers. Default `[64, 64]`. */
  hidden?: number[];
  /** Activation of the hidden layers. Default `"relu"`. */
  activation?: MLPActivation;
  /** Adam learning rate. Default `1e-3`. */
  learningRate?: number;
  /**
   * Passes over the data per `fit` call. Default 3: 10,000 rows x 40 columns
   * (237 steps of 128) train in about 4 s on the pure-JS cpu backend. Raised as
   * needed to reach `minSteps`.
   */
  epochs?: number;
  /**
   * Least number of optimizer steps per `fit` call, so that small data sets
   * still train: the epoch count is raised to reach it. Default 200; 0 turns
   * it off.
   */
  minSteps?: number;
  /** Rows per minibatch. Default 128. */
  batchSize?: number;
  /** Rows per `predict` chunk. Default 4096. */
  predictBatchSize?: number;
  /** Seed of the weight initialisation and of the shuffles. Default 0. */
  seed?: number;
  /**
   * `"mse"`: squared error on standardised targets. `"rank"`: pairwise
   * logistic (RankNet) loss over the pairs of a minibatch that lie in the same
   * query group and have different targets; rows of a group are batched
   * together. Default `"mse"`.
   */
  loss?: MLPLoss;
}

/** The JSON document that {@link MLPRegressor.save} writes. */
export interface MLPFile {
  /** Always `"tunebook-mlp"`. */
  format: "tunebook-mlp";
  /** Format version; 1. */
  version: 1;
  /** The options the model was built with (defaults filled in). */
  options: Required<MLPOptions>;
  /** Input columns. */
  inputDim: number;
  /** Layer widths from input to output, e.g. `[40, 64, 64, 1]`. */
  layers: number[];
  /** Per-column input means. */
  xMean: number[];
  /** Per-column input standard deviations (1 where a column is constant). */
  xStd: number[];
  /** Target mean (0 for the rank loss). */
  yMean: number;
  /** Target standard deviation (1 for the rank loss). */
  yStd: number;
  /** Kernels and biases in layer order: shape and little-endian float32 base64. */
  weights: { name: string; shape: number[]; data: string }[];
}

const DEFAULTS: Required<MLPOptions> = {
  hidden: [64, 64],
  activation: "relu",
  learningRate: 1e-3,
  epochs: 3,
  minSteps: 200,
  batchSize: 128,
  predictBatchSize: 4096,
  seed: 0,
  loss: "mse",
};

interface Layer {
  kernel: tf.Variable;
  bias: tf.Variable;
}

/** Adam moments of every weight tensor (in layer order: kernel, bias, ...) and the step count. */
interface AdamState {
  m: Float32Array[];
  v: Float32Array[];
  t: number;
}

const ADAM_BETA1 = 0.9, ADAM_BETA2 = 0.999, ADAM_EPSILON = 1e-7;

/** A minibatch loss evaluated in plain JS: loss and its gradient for the given scores. */
type JsLoss = (scores: Float32Array) => { loss: number; grad: Float32Array };

interface Normalisation {
  xMean: Float32Array;
  xStd: Float32Array;
  yMean: number;
  yStd: number;
}

/** An MLP regressor or ranker; see {@link MLPOptions} for its settings. */
export class MLPRegressor implements Regressor {
  /** `"mlp"`, or `"mlp-rank"` with the rank loss. */
  readonly name: string;
  /** The options in force, defaults filled in. */
  readonly options: Readonly<Required<MLPOptions>>;
  /** Mean training loss of each epoch of the last `fit` call. */
  losses: number[] = [];

  #layers: Layer[] = [];
  #norm: Normalisation | undefined;
  #adam: AdamState | undefined;
  #prng: Prng;
  #disposed = false;

  /** Creates an untrained model; the network is built at the first `fit`. */
  constructor(options: MLPOptions = {}) {
    const o = withDefaults(DEFAULTS, options);
    o.hidden = [...o.hidden];
    validateOptions(o);
    this.options = o;
    this.name = o.loss === "rank" ? "mlp-rank" : "mlp";
    this.#prng = createPrng(o.seed);
  }

  /** Whether the model has been fitted (or loaded). */
  get trained(): boolean {
    return this.#layers.length > 0;
  }

  /**
   * Trains on `x` and `y`. A fresh fit (the default) re-initialises weights,
   * normalisation and shuffling from the seed, so equal seeds and data give
   * equal models; `continueTraining` keeps all three and the Adam state.
   * Non-finite features are treated as the column mean. Throws a RangeError
   * on mismatched shapes, non-finite targets, bad groups, or a column count
   * other than the trained one when continuing.
   */
  fit(x: Matrix, y: Float32Array, options: FitOptions = {}): void {
    this.#checkAlive();
    checkMatrix(x);
    if (y.length !== x.rows) {
      throw new RangeError(`fit: ${y.length} targets for ${x.rows} rows`);
    }
    for (let i = 0; i < y.length; i++) {
      if (!Number.isFinite(y[i])) throw new RangeError(`fit: target ${i} is ${y[i]}`);
    }
    const groupOf = groupIds(x.rows, options.groups);
    if (x.rows === 0) return;

    const o = this.options;
    const resume = options.continueTraining === true && this.trained;
    if (resume) {
      if (x.cols !== this.#norm!.xMean.length) {
        throw new RangeError(
          `fit: ${x.cols} columns, but the model was trained on ${this.#norm!.xMean.length}`,
        );
      }
    } else {
      this.#release();
      this.#prng = createPrng(o.seed);
      this.#norm = computeNormalisation(x, y, o.loss);
      this.#layers = initLayers([x.cols, ...o.hidden, 1], this.#prng);
    }
    this.#adam ??= newAdam(this.#layers);

    const norm = this.#norm!;
    const xs = standardise(x, norm);
    const ys = new Float32Array(y.length);
    for (let i = 0; i < y.length; i++) ys[i] = (y[i] - norm.yMean) / norm.yStd;

    const batch = Math.min(o.batchSize, x.rows);
    const stepsPerEpoch = Math.ceil(x.rows / batch);
    const epochs = Math.max(o.epochs, Math.ceil(o.minSteps / stepsPerEpoch));
    const cols = x.cols;
    const bx = new Float32Array(batch * cols);
    const by = new Float32Array(batch);
    const bg = new Int32Array(batch);
    this.losses = [];

    for (let epoch = 0; epoch < epochs; epoch++) {
      const order = o.loss === "rank" && options.groups
        ? groupedOrder(groupOf, this.#prng)
        : shuffled(x.rows, this.#prng);
      let total = 0, counted = 0;
      for (let start = 0; start < order.length; start += batch) {
        const n = Math.min(batch, order.length - start);
        for (let r = 0; r < n; r++) {
          const row = order[start + r];
          bx.set(xs.subarray(row * cols, row * cols + cols), r * cols);
          by[r] = ys[row];
          bg[r] = groupOf[row];
        }
        const loss = o.loss === "rank"
          ? rankLoss(by.subarray(0, n), bg.subarray(0, n))
          : mseLoss(by.subarray(0, n));
        if (loss === undefined) continue;
        total += this.#step(bx.subarray(0, n * cols), n, cols, loss);
        counted++;
      }
      this.losses.push(counted > 0 ? total / counted : NaN);
    }
  }

  /** One Adam step on a minibatch; returns the minibatch loss. */
  #step(bx: Float32Array, n: number, cols: number, loss: JsLoss): number {
    const vars = this.#layers.flatMap((l) => [l.kernel, l.bias]);
    const adam = this.#adam!;
    const lr = this.options.learningRate;
    return tf.tidy(() => {
      const xt = tf.tensor2d(bx, [n, cols]);
      const { value, grads } = tf.variableGrads(
        () => jsLossOp(loss)(forward(this.#layers, xt, this.options.activation)),
        vars,
      );
      adam.t++;
      const c1 = 1 - ADAM_BETA1 ** adam.t, c2 = 1 - ADAM_BETA2 ** adam.t;
      vars.forEach((v, k) => {
        const g = grads[v.name].dataSync() as Float32Array;
        const w = Float32Array.from(v.dataSync() as Float32Array);
        const m = adam.m[k], s = adam.v[k];
        for (let i = 0; i < w.length; i++) {
          m[i] = ADAM_BETA1 * m[i] + (1 - ADAM_BETA1) * g[i];
          s[i] = ADAM_BETA2 * s[i] + (1 - ADAM_BETA2) * g[i] * g[i];
          w[i] -= (lr * (m[i] / c1)) / (Math.sqrt(s[i] / c2) + ADAM_EPSILON);
        }
        v.assign(tf.tensor(w, v.shape));
      });
      return value.dataSync()[0];
    });
  }

  /** Scores the rows of `x` in chunks of `predictBatchSize`. Throws before a fit. */
  predict(x: Matrix): Float32Array {
    this.#checkAlive();
    if (!this.trained) throw new Error("predict: the MLP has not been fitted");
    checkMatrix(x);
    const norm = this.#norm!;
    if (x.cols !== norm.xMean.length) {
      throw new RangeError(`predict: ${x.cols} columns, model has ${norm.xMean.length}`);
    }
    const xs = standardise(x, norm);
    const out = new Float32Array(x.rows);
    const chunk = this.options.predictBatchSize;
    for (let start = 0; start < x.rows; start += chunk) {
      const n = Math.min(chunk, x.rows - start);
      const s = tf.tidy(() => {
        const xt = tf.tensor2d(xs.subarray(start * x.cols, (start + n) * x.cols), [n, x.cols]);
        return forward(this.#layers, xt, this.options.activation);
      });
      const values = s.dataSync();
      for (let i = 0; i < n; i++) out[start + i] = values[i] * norm.yStd + norm.yMean;
      s.dispose();
    }
    return out;
  }

  /** The model as a JSON-ready {@link MLPFile}. Throws before a fit. */
  toJSON(): MLPFile {
    this.#checkAlive();
    if (!this.trained) throw new Error("save: the MLP has not been fitted");
    const norm = this.#norm!;
    const weights: MLPFile["weights"] = [];
    this.#layers.forEach((l, i) => {
      weights.push({ name: `dense${i}/kernel`, shape: l.kernel.shape, data: b64(l.kernel) });
      weights.push({ name: `dense${i}/bias`, shape: l.bias.shape, data: b64(l.bias) });
    });
    return {
      format: "tunebook-mlp",
      version: 1,
      options: { ...this.options, hidden: [...this.options.hidden] },
      inputDim: norm.xMean.length,
      layers: [norm.xMean.length, ...this.options.hidden, 1],
      xMean: Array.from(norm.xMean),
      xStd: Array.from(norm.xStd),
      yMean: norm.yMean,
      yStd: norm.yStd,
      weights,
    };
  }

  /**
   * Writes the model to `path` as one JSON file ({@link MLPFile}): topology,
   * options, normalisation and base64 weights. Creates missing parent folders.
   * The Adam state is not saved.
   */
  async save(path: string): Promise<void> {
    const doc = this.toJSON();
    const slash = path.lastIndexOf("/");
    if (slash > 0) await Deno.mkdir(path.slice(0, slash), { recursive: true });
    await Deno.writeTextFile(path, JSON.stringify(doc));
  }

  /** Rebuilds a model from an {@link MLPFile} document. Throws on a malformed one. */
  static fromJSON(doc: MLPFile): MLPRegressor {
    if (doc?.format !== "tunebook-mlp" || doc.version !== 1) {
      throw new Error("load: not a tunebook-mlp version 1 document");
    }
    const model = new MLPRegressor(doc.options);
    const layers = [doc.inputDim, ...model.options.hidden, 1];
    if (doc.xMean.length !== doc.inputDim || doc.xStd.length !== doc.inputDim) {
      throw new Error("load: normalisation does not match the input width");
    }
    if (doc.weights.length !== 2 * (layers.length - 1)) {
      throw new Error(`load: ${doc.weights.length} weight tensors for ${layers.length - 1} layers`);
    }
    const tensors = doc.weights.map((w, i) => {
      const l = i >> 1;
      const shape = i % 2 === 0 ? [layers[l], layers[l + 1]] : [layers[l + 1]];
      const data = unb64(w.data);
      if (w.shape.join() !== shape.join() || data.length !== shape.reduce((a, b) => a * b, 1)) {
        throw new Error(`load: weight ${w.name} has shape [${w.shape}], expected [${shape}]`);
      }
      return { data, shape };
    });
    for (let i = 0; i < tensors.length; i += 2) {
      model.#layers.push({
        kernel: makeVariable(tensors[i].data, tensors[i].shape),
        bias: makeVariable(tensors[i + 1].data, tensors[i + 1].shape),
      });
    }
    model.#norm = {
      xMean: Float32Array.from(doc.xMean),
      xStd: Float32Array.from(doc.xStd),
      yMean: doc.yMean,
      yStd: doc.yStd,
    };
    return model;
  }

  /** Reads a model that {@link MLPRegressor.save} wrote. */
  static async load(path: string): Promise<MLPRegressor> {
    return MLPRegressor.fromJSON(JSON.parse(await Deno.readTextFile(path)));
  }

  /** Frees the weights and optimizer state; the model is unusable afterwards. */
  dispose(): void {
    this.#release();
    this.#disposed = true;
  }

  #release(): void {
    for (const l of this.#layers) {
      l.kernel.dispose();
      l.bias.dispose();
    }
    this.#layers = [];
    this.#adam = undefined;
    this.#norm = undefined;
  }

  #checkAlive(): void {
    if (this.#disposed) throw new Error("MLPRegressor: used after dispose()");
  }
}

function validateOptions(o: Required<MLPOptions>): void {
  const positiveInt = (v: number) => Number.isInteger(v) && v >= 1;
  if (!o.hidden.every(positiveInt)) throw new RangeError(`hidden: bad widths [${o.hidden}]`);
  if (!["relu", "elu", "tanh"].includes(o.activation)) {
    throw new RangeError(`activation: unknown ${o.activation}`);
  }
  if (!(o.learningRate > 0)) throw new RangeError(`learningRate: ${o.learningRate}`);
  if (!Number.isInteger(o.epochs) || o.epochs < 0) throw new RangeError(`epochs: ${o.epochs}`);
  if (!Number.isInteger(o.minSteps) || o.minSteps < 0) {
    throw new RangeError(`minSteps: ${o.minSteps}`);
  }
  if (!positiveInt(o.batchSize)) throw new RangeError(`batchSize: ${o.batchSize}`);
  if (!positiveInt(o.predictBatchSize)) {
    throw new RangeError(`predictBatchSize: ${o.predictBatchSize}`);
  }
  if (!Number.isFinite(o.seed)) throw new RangeError(`seed: ${o.seed}`);
  if (o.loss !== "mse" && o.loss !== "rank") throw new RangeError(`loss: unknown ${o.loss}`);
}

function checkMatrix(x: Matrix): void {
  if (!Number.isInteger(x.rows) || !Number.isInteger(x.cols) || x.rows < 0 || x.cols < 1) {
    throw new RangeError(`bad matrix shape ${x.rows} x ${x.cols}`);
  }
  if (x.data.length !== x.rows * x.cols) {
    throw new RangeError(`matrix has ${x.data.length} values for ${x.rows} x ${x.cols}`);
  }
}

/** Group id of each row; throws unless the group sizes are positive and add up to `rows`. */
function groupIds(rows: number, groups: number[] | undefined): Int32Array {
  const ids = new Int32Array(rows);
  if (!groups) return ids;
  let at = 0;
  groups.forEach((size, g) => {
    if (!Number.isInteger(size) || size < 1) {
      throw new RangeError(`fit: group ${g} has size ${size}`);
    }
    if (at + size > rows) throw new RangeError(`fit: groups cover more than ${rows} rows`);
    ids.fill(g, at, at + size);
    at += size;
  });
  if (at !== rows) throw new RangeError(`fit: groups cover ${at} of ${rows} rows`);
  return ids;
}

function computeNormalisation(x: Matrix, y: Float32Array, loss: MLPLoss): Normalisation {
  const { rows, cols, data } = x;
  const sum = new Float64Array(cols), sq = new Float64Array(cols), count = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = data[r * cols + c];
      if (Number.isFinite(v)) {
        sum[c] += v;
        sq[c] += v * v;
        count[c]++;
      }
    }
  }
  const xMean = new Float32Array(cols), xStd = new Float32Array(cols);
  for (let c = 0; c < cols; c++) {
    const mean = count[c] > 0 ? sum[c] / count[c] : 0;
    const variance = count[c] > 0 ? Math.max(0, sq[c] / count[c] - mean * mean) : 0;
    const std = Math.sqrt(variance);
    xMean[c] = mean;
    xStd[c] = std > 1e-12 && Number.isFinite(std) ? std : 1;
  }
  if (loss === "rank") return { xMean, xStd, yMean: 0, yStd: 1 };
  let ySum = 0, ySq = 0;
  for (const v of y) {
    ySum += v;
    ySq += v * v;
  }
  const yMean = ySum / y.length;
  const yStd = Math.sqrt(Math.max(0, ySq / y.length - yMean * yMean));
  return { xMean, xStd, yMean, yStd: yStd > 1e-12 && Number.isFinite(yStd) ? yStd : 1 };
}

function standardise(x: Matrix, norm: Normalisation): Float32Array {
  const { rows, cols, data } = x;
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      const v = data[i];
      out[i] = Number.isFinite(v) ? (v - norm.xMean[c]) / norm.xStd[c] : 0;
    }
  }
  return out;
}

/** He-uniform kernels for hidden layers, Glorot-uniform for the output, zero biases. */
function initLayers(widths: number[], prng: Prng): Layer[] {
  const layers: Layer[] = [];
  for (let l = 0; l + 1 < widths.length; l++) {
    const fanIn = widths[l], fanOut = widths[l + 1];
    const last = l + 2 === widths.length;
    const limit = last ? Math.sqrt(6 / (fanIn + fanOut)) : Math.sqrt(6 / fanIn);
    const w = new Float32Array(fanIn * fanOut);
    for (let i = 0; i < w.length; i++) w[i] = (2 * prng.next() - 1) * limit;
    layers.push({
      kernel: makeVariable(w, [fanIn, fanOut]),
      bias: makeVariable(new Float32Array(fanOut), [fanOut]),
    });
  }
  return layers;
}

/** A trainable variable holding `data`; the temporary tensor it starts from is freed. */
function makeVariable(data: Float32Array, shape: number[]): tf.Variable {
  return tf.tidy(() => tf.variable(tf.tensor(data, shape), true));
}

function newAdam(layers: Layer[]): AdamState {
  const sizes = layers.flatMap((l) => [l.kernel.size, l.bias.size]);
  return {
    m: sizes.map((n) => new Float32Array(n)),
    v: sizes.map((n) => new Float32Array(n)),
    t: 0,
  };
}

/**
 * Wraps a {@link JsLoss} as a scalar tensor op of the scores ([n, 1]) with a custom
 * gradient, so that pairwise losses cost O(n^2) plain JS instead of n x n tensors.
 */
function jsLossOp(loss: JsLoss): (scores: tf.Tensor) => tf.Scalar {
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const scores = args[0] as tf.Tensor;
    const save = args[1] as tf.GradSaveFunc;
    const { loss: value, grad } = loss(scores.dataSync() as Float32Array);
    save([tf.tensor(grad, scores.shape)]);
    return {
      value: tf.scalar(value),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => [tf.mul(dy, saved[0])],
    };
  });
  return (scores) => op(scores) as tf.Scalar;
}

/** Mean squared error against targets `y`. */
function mseLoss(y: Float32Array): JsLoss {
  return (s) => {
    const n = y.length;
    const grad = new Float32Array(n);
    let loss = 0;
    for (let i = 0; i < n; i++) {
      const d = s[i] - y[i];
      loss += d * d;
      grad[i] = (2 * d) / n;
    }
    return { loss: loss / n, grad };
  };
}

/**
 * Pairwise logistic (RankNet) loss: the mean of log(1 + exp(s_j - s_i)) over the pairs
 * with equal group and y_i > y_j. Undefined when the minibatch has no such pair.
 */
function rankLoss(y: Float32Array, group: Int32Array): JsLoss | undefined {
  const n = y.length;
  const pairs: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (group[i] === group[j] && y[i] > y[j]) pairs.push(i, j);
    }
  }
  if (pairs.length === 0) return undefined;
  const count = pairs.length / 2;
  return (s) => {
    const grad = new Float32Array(n);
    let loss = 0;
    for (let p = 0; p < pairs.length; p += 2) {
      const i = pairs[p], j = pairs[p + 1];
      const z = s[j] - s[i];
      loss += z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z));
      const sig = 1 / (1 + Math.exp(-z)); // d softplus(z) / dz
      grad[i] -= sig / count;
      grad[j] += sig / count;
    }
    return { loss: loss / count, grad };
  };
}

function forward(layers: Layer[], x: tf.Tensor2D, activation: MLPActivation): tf.Tensor2D {
  // Unfused ops, so that no gradient is spent on `x`; the bias enters as ones x bias, whose
  // gradient is one small matMul instead of the cpu backend's slow column sum.
  const ones = tf.ones([x.shape[0], 1]);
  let h = x;
  layers.forEach((l, i) => {
    const bias = tf.matMul(ones, tf.reshape(l.bias, [1, l.bias.shape[0]]));
    const z = tf.add(tf.matMul(h, l.kernel), bias) as tf.Tensor2D;
    if (i === layers.length - 1) h = z;
    else if (activation === "relu") h = tf.relu(z);
    else if (activation === "elu") h = tf.elu(z);
    else h = tf.tanh(z);
  });
  return h;
}

/** A seeded Fisher-Yates permutation of 0..n-1. */
function shuffled(n: number, prng: Prng): Int32Array {
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  shuffleInPlace(order, prng);
  return order;
}

function shuffleInPlace(a: Int32Array, prng: Prng): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

/** Rows grouped by query: groups in shuffled order, rows shuffled within each group. */
function groupedOrder(groupOf: Int32Array, prng: Prng): Int32Array {
  const starts: number[] = [];
  for (let i = 0; i < groupOf.length; i++) {
    if (i === 0 || groupOf[i] !== groupOf[i - 1]) starts.push(i);
  }
  starts.push(groupOf.length);
  const groupOrder = shuffled(starts.length - 1, prng);
  const order = new Int32Array(groupOf.length);
  let at = 0;
  for (const g of groupOrder) {
    const rows = new Int32Array(starts[g + 1] - starts[g]);
    for (let i = 0; i < rows.length; i++) rows[i] = starts[g] + i;
    shuffleInPlace(rows, prng);
    order.set(rows, at);
    at += rows.length;
  }
  return order;
}

function b64(t: tf.Tensor): string {
  const values = t.dataSync() as Float32Array;
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i], true);
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

function unb64(text: string): Float32Array {
  const s = atob(text);
  if (s.length % 4 !== 0) throw new Error("load: weight data is not a whole number of float32s");
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  const view = new DataView(bytes.buffer);
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}
