/**
 * A network as data: one input and a list of layers in JSON a user can write,
 * each naming its operator, its inputs (earlier layers or the network input)
 * and its attributes. Data is NCHW; weights live beside the network, keyed
 * `<layer>.<param>` (see {@link paramShapes}).
 *
 * ```json
 * { "name": "tiny", "input": { "name": "x", "shape": [1, 3, 8, 8] },
 *   "layers": [
 *     { "name": "c1", "op": "conv2d", "inputs": ["x"], "channels": 4, "kernel": 3, "pad": 1 },
 *     { "name": "b1", "op": "batch_norm", "inputs": ["c1"] },
 *     { "name": "r1", "op": "relu", "inputs": ["b1"] },
 *     { "name": "g", "op": "global_avg_pool2d", "inputs": ["r1"] },
 *     { "name": "f", "op": "flatten", "inputs": ["g"] },
 *     { "name": "fc", "op": "dense", "inputs": ["f"], "units": 10 } ] }
 * ```
 *
 * @example
 * ```ts
 * import { inferShapes, parseNetwork } from "./network.ts";
 * const net = parseNetwork({
 *   name: "tiny", input: { name: "x", shape: [1, 3, 8, 8] },
 *   layers: [{ name: "c1", op: "conv2d", inputs: ["x"], channels: 4, kernel: 3, pad: 1 }],
 * });
 * if (inferShapes(net).get("c1")!.join() !== "1,4,8,8") throw new Error();
 * ```
 * @module
 */
import { pooledExtent } from "../ir/nn.ts";

/** The operators a layer may use. */
export const OPS = [
  "conv2d",
  "dense",
  "batch_matmul",
  "batch_norm",
  "relu",
  "relu6",
  "add",
  "max_pool2d",
  "avg_pool2d",
  "global_avg_pool2d",
  "concat",
  "flatten",
] as const;

/** An operator name. */
export type Op = typeof OPS[number];

/** One layer. Attributes not used by its operator are ignored. */
export interface Layer {
  /** Unique name; later layers refer to it. */
  name: string;
  /** The operator. */
  op: Op;
  /** Names of the layers (or the network input) it reads, in order. */
  inputs: string[];
  /** conv2d: output channels. */
  channels?: number;
  /** conv2d and pools: window size, square. */
  kernel?: number;
  /** conv2d and pools: stride. Default 1 (pools: the kernel). */
  stride?: number;
  /** conv2d and pools: zero padding on every side. Default 0. */
  pad?: number;
  /** conv2d: groups (depthwise when equal to the channels). Default 1. */
  groups?: number;
  /** conv2d and dense: whether it has a bias. Default false for conv2d, true for dense. */
  bias?: boolean;
  /** dense: output features. */
  units?: number;
  /** batch_norm: epsilon. Default 1e-5. */
  epsilon?: number;
  /** max_pool2d: ceil mode (ONNX `ceil_mode`). Default false. */
  ceil?: boolean;
}

/** A network: an input and layers in an order where every layer follows its inputs. */
export interface Network {
  /** A name for reports. */
  name: string;
  /** The input tensor. */
  input: { name: string; shape: number[] };
  /** The layers, inputs first. */
  layers: Layer[];
  /** The output layer. Default: the last. */
  output?: string;
}

/** Thrown for a network that cannot be built; the message names the layer and field. */
export class NetworkError extends Error {
  override name = "NetworkError";
}

const isPosInt = (x: unknown): x is number => Number.isInteger(x) && (x as number) > 0;

/** Checks a JSON value is a {@link Network}; throws a {@link NetworkError} naming the field. */
export function parseNetwork(value: unknown): Network {
  const v = value as Partial<Network>;
  if (typeof v !== "object" || v === null) throw new NetworkError("A network must be an object");
  if (typeof v.name !== "string") throw new NetworkError('Network field "name" must be a string');
  const input = v.input;
  if (
    typeof input?.name !== "string" || !Array.isArray(input.shape) ||
    input.shape.length !== 4 || !input.shape.every(isPosInt)
  ) {
    throw new NetworkError('Network field "input" must be { name, shape: [N, C, H, W] }');
  }
  if (!Array.isArray(v.layers) || v.layers.length === 0) {
    throw new NetworkError('Network field "layers" must be a non-empty list');
  }
  const net: Network = { name: v.name, input, layers: v.layers, output: v.output };
  inferShapes(net);
  return net;
}

function attr(l: Layer, key: keyof Layer, def?: number): number {
  const x = l[key] ?? def;
  const ok = key === "pad" ? Number.isInteger(x) && (x as number) >= 0 : isPosInt(x);
  if (!ok) {
    throw new NetworkError(
      `Layer "${l.name}" (${l.op}): field "${key}" must be a ${
        key === "pad" ? "non-negative" : "positive"
      } integer, got ${JSON.stringify(x)}`,
    );
  }
  return x as number;
}

/** The attributes of a convolution or pool, defaults applied. */
export function windowOf(l: Layer): { kernel: number; stride: number; pad: number } {
  const kernel = attr(l, "kernel");
  return {
    kernel,
    stride: attr(l, "stride", l.op === "conv2d" ? 1 : kernel),
    pad: attr(l, "pad", 0),
  };
}

/** Shapes of the parameters of a layer, by parameter name (`weight`, `bias`, `gamma`, …). */
export function paramShapes(l: Layer, inShape: number[]): Record<string, number[]> {
  switch (l.op) {
    case "conv2d": {
      const F = attr(l, "channels"), g = attr(l, "groups", 1), { kernel } = windowOf(l);
      const p: Record<string, number[]> = { weight: [F, inShape[1] / g, kernel, kernel] };
      if (l.bias) p.bias = [F];
      return p;
    }
    case "dense": {
      const p: Record<string, number[]> = { weight: [attr(l, "units"), inShape[1]] };
      if (l.bias ?? true) p.bias = [attr(l, "units")];
      return p;
    }
    case "batch_norm": {
      const C = [inShape[1]];
      return { gamma: C, beta: C, mean: C, var: C };
    }
    default:
      return {};
  }
}

/**
 * Output shape of every layer (and of the input), by name; throws a
 * {@link NetworkError} naming the first layer whose inputs or attributes do not fit.
 */
export function inferShapes(net: Network): Map<string, number[]> {
  const shapes = new Map<string, number[]>([[net.input.name, [...net.input.shape]]]);
  for (const [i, l] of net.layers.entries()) {
    if (typeof l?.name !== "string" || l.name === "") {
      throw new NetworkError(`Layer ${i}: field "name" must be a non-empty string`);
    }
    if (shapes.has(l.name)) throw new NetworkError(`Layer "${l.name}": the name is used twice`);
    if (!(OPS as readonly string[]).includes(l.op)) {
      throw new NetworkError(
        `Layer "${l.name}": unknown op ${JSON.stringify(l.op)}; known: ${OPS.join(", ")}`,
      );
    }
    if (!Array.isArray(l.inputs) || l.inputs.length === 0) {
      throw new NetworkError(`Layer "${l.name}": field "inputs" must be a non-empty list`);
    }
    const ins = l.inputs.map((n) => {
      const s = shapes.get(n);
      if (!s) throw new NetworkError(`Layer "${l.name}": input "${n}" is not an earlier layer`);
      return s;
    });
    shapes.set(l.name, outShape(l, ins));
  }
  const out = net.output ?? net.layers[net.layers.length - 1].name;
  if (!shapes.has(out)) throw new NetworkError(`Network output "${out}" is not a layer`);
  return shapes;
}

function outShape(l: Layer, ins: number[][]): number[] {
  const x = ins[0];
  const need = (rank: number, count = 1) => {
    if (ins.length !== count) {
      throw new NetworkError(
        `Layer "${l.name}" (${l.op}) takes ${count} input(s), got ${ins.length}`,
      );
    }
    if (x.length !== rank) {
      throw new NetworkError(`Layer "${l.name}" (${l.op}) needs a ${rank}-D input, got [${x}]`);
    }
  };
  const fail = (why: string): never => {
    throw new NetworkError(`Layer "${l.name}" (${l.op}): ${why}`);
  };
  const pooled = (n: number, k: number, s: number, p: number, ceil = false) => {
    try {
      return pooledExtent(n, k, s, p, ceil);
    } catch (e) {
      return fail((e as Error).message);
    }
  };
  switch (l.op) {
    case "conv2d": {
      need(4);
      const F = attr(l, "channels"),
        g = attr(l, "groups", 1),
        { kernel, stride, pad } = windowOf(l);
      if (x[1] % g !== 0 || F % g !== 0) fail(`groups ${g} must divide channels ${x[1]} and ${F}`);
      return [x[0], F, pooled(x[2], kernel, stride, pad), pooled(x[3], kernel, stride, pad)];
    }
    case "max_pool2d":
    case "avg_pool2d": {
      need(4);
      const { kernel, stride, pad } = windowOf(l), ceil = l.op === "max_pool2d" && !!l.ceil;
      return [
        x[0],
        x[1],
        pooled(x[2], kernel, stride, pad, ceil),
        pooled(x[3], kernel, stride, pad, ceil),
      ];
    }
    case "global_avg_pool2d":
      need(4);
      return [x[0], x[1], 1, 1];
    case "dense":
      need(2);
      return [x[0], attr(l, "units")];
    case "batch_matmul": {
      need(3, 2);
      const y = ins[1];
      if (y.length !== 3 || y[0] !== x[0] || y[1] !== x[2]) {
        fail(`cannot multiply [${x}] by [${y}]`);
      }
      return [x[0], x[1], y[2]];
    }
    case "flatten":
      need(x.length);
      return [x[0], x.slice(1).reduce((a, b) => a * b, 1)];
    case "concat": {
      if (ins.some((s) => s.length !== 4 || s[0] !== x[0] || s[2] !== x[2] || s[3] !== x[3])) {
        fail(`inputs [${ins.map((s) => `[${s}]`).join(", ")}] differ outside the channels`);
      }
      return [x[0], ins.reduce((a, s) => a + s[1], 0), x[2], x[3]];
    }
    case "add":
      need(x.length, 2);
      if (ins[1].join() !== x.join()) fail(`inputs [${x}] and [${ins[1]}] differ`);
      return [...x];
    case "batch_norm":
      need(4);
      return [...x];
    default:
      need(x.length);
      return [...x];
  }
}

/** The number of elements of a shape. */
export const sizeOf = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);
