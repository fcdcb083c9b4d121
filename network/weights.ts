/**
 * Weights of a network, keyed `<layer>.<param>`: random ones for benchmarks
 * and tests, and batch norm folded into the preceding convolution's weights
 * and bias before tuning (`W' = W * s`, `b' = (b - mean) * s + beta` with
 * `s = gamma / sqrt(var + eps)`), which removes every batch_norm layer.
 *
 * @example
 * ```ts
 * import { foldBatchNorm, randomWeights } from "./weights.ts";
 * import { resnet18 } from "./builtin.ts";
 * const net = resnet18({ size: 32 });
 * const folded = foldBatchNorm(net, randomWeights(net, 1));
 * if (folded.network.layers.some((l) => l.op === "batch_norm")) throw new Error();
 * ```
 * @module
 */
import { checkInteger, described } from "../ir/check.ts";
import { createPrng } from "../ir/prng.ts";
import {
  inferShapes,
  type Layer,
  type Network,
  NetworkError,
  paramShapes,
  sizeOf,
} from "./network.ts";

/** Parameters by `<layer>.<param>`. */
export type Weights = Map<string, Float32Array>;

/**
 * Random weights for every parameter: convolution and dense weights uniform
 * with He-like scale `sqrt(3 / fan_in)`, biases and batch-norm shifts and means
 * small, scales and variances near 1 (activations stay of order 1 through deep nets).
 */
export function randomWeights(net: Network, seed: number): Weights {
  if (typeof net !== "object" || net === null || !Array.isArray(net.layers) || !net.input) {
    throw new TypeError(
      `net must be a network (builtinNetwork("resnet18")), got ${described(net)}`,
    );
  }
  checkInteger(seed, "seed");
  const prng = createPrng(seed), shapes = inferShapes(net), out: Weights = new Map();
  const u = (a: number, b: number) => a + (b - a) * prng.next();
  for (const l of net.layers) {
    for (const [p, shape] of Object.entries(paramShapes(l, shapes.get(l.inputs[0])!))) {
      const v = new Float32Array(sizeOf(shape));
      const fanIn = sizeOf(shape.slice(1));
      const scale = Math.sqrt(3 / fanIn);
      for (let i = 0; i < v.length; i++) {
        v[i] = p === "weight"
          ? u(-scale, scale) * Math.SQRT2
          : p === "gamma" || p === "var"
          ? u(0.5, 1.5)
          : u(-0.1, 0.1);
      }
      out.set(`${l.name}.${p}`, v);
    }
  }
  return out;
}

/** Throws unless every parameter of every layer is present with the right size. */
export function checkWeights(net: Network, weights: Weights): void {
  const shapes = inferShapes(net);
  for (const l of net.layers) {
    for (const [p, shape] of Object.entries(paramShapes(l, shapes.get(l.inputs[0])!))) {
      const v = weights.get(`${l.name}.${p}`);
      if (!v || v.length !== sizeOf(shape)) {
        throw new NetworkError(
          `Layer "${l.name}": parameter "${p}" needs ${sizeOf(shape)} values [${shape}], got ${
            v?.length ?? "none"
          }`,
        );
      }
    }
  }
}

/**
 * Folds each batch_norm into the conv2d it reads (which must feed nothing else):
 * the convolution gains a bias and the batch_norm layer disappears, its readers
 * reading the convolution. A batch_norm after anything else is an error.
 */
export function foldBatchNorm(
  net: Network,
  weights: Weights,
): { network: Network; weights: Weights } {
  checkWeights(net, weights);
  const out: Weights = new Map(weights);
  const byName = new Map(net.layers.map((l) => [l.name, l]));
  const renamed = new Map<string, string>();
  const layers: Layer[] = [];
  const folded = new Map<string, Layer>();
  for (const l of net.layers) {
    if (l.op !== "batch_norm") {
      const copy = { ...l, inputs: l.inputs.map((n) => renamed.get(n) ?? n) };
      layers.push(copy);
      folded.set(l.name, copy);
      continue;
    }
    const conv = byName.get(l.inputs[0]);
    const readers = net.layers.filter((m) => m.inputs.includes(l.inputs[0]));
    if (conv?.op !== "conv2d" || readers.length !== 1) {
      throw new NetworkError(
        `Layer "${l.name}": batch_norm can only be folded into a conv2d that feeds nothing else`,
      );
    }
    const w = out.get(`${conv.name}.weight`)!, F = conv.channels!, per = w.length / F;
    const eps = l.epsilon ?? 1e-5;
    const g = out.get(`${l.name}.gamma`)!, beta = out.get(`${l.name}.beta`)!;
    const mean = out.get(`${l.name}.mean`)!, variance = out.get(`${l.name}.var`)!;
    const oldBias = conv.bias ? out.get(`${conv.name}.bias`)! : new Float32Array(F);
    const nw = new Float32Array(w.length), nb = new Float32Array(F);
    for (let f = 0; f < F; f++) {
      const s = g[f] / Math.sqrt(variance[f] + eps);
      for (let i = 0; i < per; i++) nw[f * per + i] = w[f * per + i] * s;
      nb[f] = (oldBias[f] - mean[f]) * s + beta[f];
    }
    out.set(`${conv.name}.weight`, nw);
    out.set(`${conv.name}.bias`, nb);
    for (const p of ["gamma", "beta", "mean", "var"]) out.delete(`${l.name}.${p}`);
    folded.get(conv.name)!.bias = true;
    renamed.set(l.name, renamed.get(conv.name) ?? conv.name);
  }
  const output = net.output ?? net.layers[net.layers.length - 1].name;
  return {
    network: { ...net, layers, output: renamed.get(output) ?? output },
    weights: out,
  };
}
