/**
 * Small dense networks on TensorFlow.js's `cpu` backend for the agents:
 * seeded initialisation, batched prediction, gradient steps with Adam and
 * global-norm clipping, weight copies (target networks), and the masked
 * factorised categorical distributions of multi-discrete actions (one head
 * per action component, padded to the widest head).
 *
 * Importing this module selects the `cpu` backend and production mode.
 * @module
 */
import * as tf from "npm:@tensorflow/tfjs@4.22.0";
import type { Prng } from "../ir/prng.ts";

tf.enableProdMode();
await tf.setBackend("cpu");
if (tf.getBackend() !== "cpu") throw new Error("tfjs: the cpu backend could not be selected");

export { tf };

/** Activation of hidden layers. */
export type Activation = "tanh" | "relu";

/** A dense network: kernels and biases in layer order. */
export interface Net {
  /** Layer widths from input to output. */
  sizes: number[];
  activation: Activation;
  /** `[kernel0, bias0, kernel1, bias1, ...]`. */
  weights: tf.Variable[];
}

/**
 * A network with Glorot-uniform kernels drawn from `prng` and zero biases;
 * the output layer's kernel is scaled by `outputGain` (small for policies,
 * so the first policy is near uniform).
 */
export function createNet(
  sizes: number[],
  prng: Prng,
  o: { activation?: Activation; outputGain?: number } = {},
): Net {
  const weights: tf.Variable[] = [];
  for (let l = 0; l + 1 < sizes.length; l++) {
    const fanIn = sizes[l], fanOut = sizes[l + 1];
    const gain = l + 2 === sizes.length ? o.outputGain ?? 1 : 1;
    const a = gain * Math.sqrt(6 / (fanIn + fanOut));
    const w = new Float32Array(fanIn * fanOut);
    for (let i = 0; i < w.length; i++) w[i] = (2 * prng.next() - 1) * a;
    weights.push(tf.tidy(() => tf.variable(tf.tensor2d(w, [fanIn, fanOut]), true)));
    weights.push(tf.tidy(() => tf.variable(tf.zeros([fanOut]), true)));
  }
  return { sizes: [...sizes], activation: o.activation ?? "tanh", weights };
}

/**
 * The network's output for a batch (call inside `tf.tidy`). For a batch the
 * bias enters as ones x bias, whose gradient is one small matMul instead of
 * the cpu backend's slow column sum.
 */
export function forward(net: Net, x: tf.Tensor2D): tf.Tensor2D {
  const rows = x.shape[0];
  const ones = rows > 1 ? tf.ones([rows, 1]) as tf.Tensor2D : undefined;
  let h: tf.Tensor2D = x;
  for (let l = 0; l < net.weights.length; l += 2) {
    const b = net.weights[l + 1];
    const bias = ones ? tf.matMul(ones, tf.reshape(b, [1, b.shape[0]!])) : b;
    h = tf.add(tf.matMul(h, net.weights[l] as tf.Tensor2D), bias);
    if (l + 2 < net.weights.length) h = net.activation === "relu" ? tf.relu(h) : tf.tanh(h);
  }
  return h;
}

/** The network's output for `rows` rows of `x` (row-major), as a plain array. */
export function predict(net: Net, x: Float32Array, rows: number): Float32Array {
  const cols = net.sizes[0];
  const out = tf.tidy(() => forward(net, tf.tensor2d(x, [rows, cols])));
  const data = out.dataSync() as Float32Array;
  out.dispose();
  return data;
}

/** Copies every weight of `from` into `to` (same sizes). */
export function copyNet(from: Net, to: Net): void {
  from.weights.forEach((w, i) => to.weights[i].assign(w));
}

/** Frees a network's variables. */
export function disposeNet(net: Net): void {
  for (const w of net.weights) w.dispose();
  net.weights = [];
}

/**
 * Adam over a fixed list of variables, in plain JS on the weights' arrays
 * (tfjs's Adam runs a dozen small kernels per variable, which dominates the
 * cost of these tiny networks on the cpu backend).
 */
export interface Adam {
  vars: tf.Variable[];
  learningRate: number;
  m: Float32Array[];
  v: Float32Array[];
  t: number;
}

const BETA1 = 0.9, BETA2 = 0.999, EPSILON = 1e-7;

/** Adam state for `vars`. */
export function createAdam(vars: tf.Variable[], learningRate: number): Adam {
  return {
    vars,
    learningRate,
    m: vars.map((v) => new Float32Array(v.size)),
    v: vars.map((v) => new Float32Array(v.size)),
    t: 0,
  };
}

/**
 * One Adam step on `loss` over the optimizer's variables, gradients clipped
 * to a global norm of `maxNorm` (Infinity: no clipping); returns the loss.
 */
export function trainStep(adam: Adam, loss: () => tf.Scalar, maxNorm = Infinity): number {
  return tf.tidy(() => {
    const { value, grads } = tf.variableGrads(loss, adam.vars);
    const g = adam.vars.map((v) => grads[v.name].dataSync() as Float32Array);
    let sq = 0;
    for (const a of g) for (let i = 0; i < a.length; i++) sq += a[i] * a[i];
    const scale = Number.isFinite(maxNorm) && Math.sqrt(sq) > maxNorm ? maxNorm / Math.sqrt(sq) : 1;
    adam.t++;
    const c1 = 1 - BETA1 ** adam.t, c2 = 1 - BETA2 ** adam.t, lr = adam.learningRate;
    adam.vars.forEach((variable, k) => {
      const w = Float32Array.from(variable.dataSync() as Float32Array);
      const gk = g[k], m = adam.m[k], s = adam.v[k];
      for (let i = 0; i < w.length; i++) {
        const gi = gk[i] * scale;
        m[i] = BETA1 * m[i] + (1 - BETA1) * gi;
        s[i] = BETA2 * s[i] + (1 - BETA2) * gi * gi;
        w[i] -= (lr * (m[i] / c1)) / (Math.sqrt(s[i] / c2) + EPSILON);
      }
      variable.assign(tf.tensor(w, variable.shape));
    });
    return value.dataSync()[0];
  });
}

/**
 * Multi-discrete action heads padded to the widest: `width` logits per head,
 * `mask` holds 0 for real choices and -1e9 for padding (added to logits).
 */
export interface Heads {
  sizes: readonly number[];
  width: number;
  mask: Float32Array;
}

/** The heads of an action space. */
export function headsOf(sizes: readonly number[]): Heads {
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new RangeError(`Action sizes must be positive integers, got ${JSON.stringify(sizes)}`);
  }
  const width = Math.max(...sizes);
  const mask = new Float32Array(sizes.length * width);
  sizes.forEach((n, h) => mask.fill(-1e9, h * width + n, (h + 1) * width));
  return { sizes, width, mask };
}

/** One-hot rows of chosen actions: `[rows, heads * width]`. */
export function oneHot(heads: Heads, actions: readonly (readonly number[])[]): Float32Array {
  const k = heads.sizes.length * heads.width;
  const out = new Float32Array(actions.length * k);
  actions.forEach((a, r) => a.forEach((c, h) => (out[r * k + h * heads.width + c] = 1)));
  return out;
}

/**
 * Log-probabilities per head of masked logits `[rows, heads * width]`, as
 * `[rows, heads, width]` (call inside `tf.tidy`).
 */
export function headLogProbs(heads: Heads, logits: tf.Tensor2D): tf.Tensor3D {
  const rows = logits.shape[0], k = heads.mask.length;
  // The mask tiled in plain JS: the cpu backend's broadcasting binary ops are slow.
  const mask = new Float32Array(rows * k);
  for (let r = 0; r < rows; r++) mask.set(heads.mask, r * k);
  const masked = tf.add(logits, tf.tensor2d(mask, [rows, k]));
  return tf.logSoftmax(tf.reshape(masked, [rows, heads.sizes.length, heads.width])) as tf.Tensor3D;
}

/** Samples one choice per head from a row of logits (softmax over each head's real choices). */
export function sampleHeads(heads: Heads, logits: Float32Array, prng: Prng, row = 0): number[] {
  const base = row * heads.sizes.length * heads.width;
  return heads.sizes.map((n, h) => {
    const off = base + h * heads.width;
    let max = -Infinity;
    for (let c = 0; c < n; c++) max = Math.max(max, logits[off + c]);
    let total = 0;
    for (let c = 0; c < n; c++) total += Math.exp(logits[off + c] - max);
    let u = prng.next() * total;
    for (let c = 0; c < n; c++) {
      u -= Math.exp(logits[off + c] - max);
      if (u <= 0) return c;
    }
    return n - 1;
  });
}

/** The highest-scoring choice per head of a row of scores (first on ties). */
export function argmaxHeads(heads: Heads, scores: Float32Array, row = 0): number[] {
  const base = row * heads.sizes.length * heads.width;
  return heads.sizes.map((n, h) => {
    const off = base + h * heads.width;
    let best = 0;
    for (let c = 1; c < n; c++) if (scores[off + c] > scores[off + best]) best = c;
    return best;
  });
}
