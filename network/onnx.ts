/**
 * Import of an ONNX model (read with `onnx-proto`) into a {@link Network} and
 * its weights (the initializers). Supported nodes: Conv, Gemm, MatMul, Relu,
 * Clip (as ReLU or ReLU6), Add, MaxPool, AveragePool, GlobalAveragePool,
 * Concat, BatchNormalization, Flatten, Reshape (to `[N, -1]`), and Dropout,
 * Identity and a Pad of zeros as pass-through; anything else is a {@link NetworkError} naming
 * the node. Windows must be square with equal strides and symmetric padding.
 *
 * @example
 * ```ts ignore
 * import { importOnnx } from "./onnx.ts";
 * const { network, weights } = importOnnx(await Deno.readFile("resnet18.onnx"));
 * console.log(network.layers.length, weights.size);
 * ```
 * @module
 */
import onnxProto from "npm:onnx-proto@8.0.1";
import { inferShapes, type Layer, type Network, NetworkError } from "./network.ts";
import type { Weights } from "./weights.ts";

const { onnx } = onnxProto;
type INode = import("npm:onnx-proto@8.0.1").onnx.INodeProto;
type ITensor = import("npm:onnx-proto@8.0.1").onnx.ITensorProto;

/** An int64 from protobufjs (a number or a Long). */
type Int = number | { toNumber(): number };
const num = (x: Int | null | undefined): number =>
  x === null || x === undefined ? NaN : typeof x === "number" ? x : x.toNumber();

/** Values of a tensor: floats for FLOAT, numbers for INT64 / INT32. */
export function tensorValues(t: ITensor): Float32Array | number[] {
  const type = t.dataType ?? 0, raw = t.rawData;
  const count = (t.dims ?? []).reduce((a: number, d) => a * num(d), 1);
  if (type === onnx.TensorProto.DataType.FLOAT) {
    if (raw && raw.length) {
      const copy = new Uint8Array(raw); // an aligned copy (protobufjs may hand out a Buffer view)
      return new Float32Array(copy.buffer, 0, count);
    }
    return Float32Array.from(t.floatData ?? []);
  }
  if (type === onnx.TensorProto.DataType.INT64) {
    if (raw && raw.length) {
      const v = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
      return Array.from({ length: count }, (_, i) => Number(v.getBigInt64(8 * i, true)));
    }
    return (t.int64Data ?? []).map(num);
  }
  if (type === onnx.TensorProto.DataType.INT32) return [...(t.int32Data ?? [])];
  throw new NetworkError(`Tensor "${t.name}": data type ${type} is not supported (FLOAT, INT64)`);
}

/** Reads an ONNX model's bytes into a network and its weights. */
export function importOnnx(
  bytes: Uint8Array,
  name = "onnx",
): { network: Network; weights: Weights } {
  let model;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch (e) {
    throw new NetworkError(`Not an ONNX model: ${(e as Error).message}`);
  }
  const graph = model.graph;
  if (!graph) throw new NetworkError("The ONNX model has no graph");
  const consts = new Map<string, { dims: number[]; values: Float32Array | number[] }>();
  for (const t of graph.initializer ?? []) {
    consts.set(t.name!, { dims: (t.dims ?? []).map(num), values: tensorValues(t) });
  }
  const input = (graph.input ?? []).find((i) => !consts.has(i.name!));
  const dims = input?.type?.tensorType?.shape?.dim?.map((d) => num(d.dimValue as Int)) ?? [];
  if (!input || dims.length !== 4 || !dims.every((d) => d > 0)) {
    throw new NetworkError(`The ONNX model needs one NCHW input of fixed shape, got [${dims}]`);
  }
  const layers: Layer[] = [], weights: Weights = new Map();
  const alias = new Map<string, string>();
  const ref = (t: string) => alias.get(t) ?? t;
  const net = (): Network => ({ name, input: { name: input.name!, shape: dims }, layers });
  for (const node of graph.node ?? []) {
    const l = convert(node, consts, ref, weights, net, alias);
    if (l) layers.push(l);
  }
  const output = ref(graph.output?.[0]?.name ?? "");
  const network: Network = { ...net(), output };
  inferShapes(network);
  return { network, weights };
}

function attrs(node: INode): Map<string, { i: number; f: number; ints: number[]; s: string }> {
  return new Map((node.attribute ?? []).map((a) => [a.name!, {
    i: num(a.i as Int),
    f: a.f ?? NaN,
    ints: (a.ints ?? []).map((x) => num(x as Int)),
    s: new TextDecoder().decode(a.s ?? new Uint8Array()),
  }]));
}

function convert(
  node: INode,
  consts: Map<string, { dims: number[]; values: Float32Array | number[] }>,
  ref: (t: string) => string,
  weights: Weights,
  net: () => Network,
  alias: Map<string, string>,
): Layer | undefined {
  const op = node.opType ?? "", ins = node.input ?? [], out = node.output?.[0] ?? "";
  const where = `ONNX node "${node.name || out}" (${op})`;
  const fail = (why: string): never => {
    throw new NetworkError(`${where}: ${why}`);
  };
  const a = attrs(node);
  const int = (k: string, def: number) => a.has(k) ? a.get(k)!.i : def;
  const floats = (t: string | undefined, what: string): Float32Array => {
    const c = t ? consts.get(t) : undefined;
    if (!c || !(c.values instanceof Float32Array)) {
      return fail(`${what} must be a float initializer`);
    }
    return c.values;
  };
  const square = (k: string, def: number) => {
    const v = a.get(k)?.ints ?? [];
    if (v.length === 0) return def;
    if (v.some((x) => x !== v[0])) fail(`${k} [${v}] must be equal on every axis`);
    return v[0];
  };
  const window = () => {
    if (a.has("auto_pad") && !["NOTSET", ""].includes(a.get("auto_pad")!.s)) {
      fail("auto_pad is not supported");
    }
    if ((a.get("dilations")?.ints ?? []).some((d) => d !== 1)) fail("dilations must be 1");
    return {
      kernel: square("kernel_shape", NaN),
      stride: square("strides", 1),
      pad: square("pads", 0),
    };
  };
  const x = ref(ins[0]);
  const layer = (o: Omit<Layer, "name" | "inputs">, inputs = [x]): Layer => ({
    name: out,
    inputs,
    ...o,
  });
  switch (op) {
    case "Conv": {
      const w = consts.get(ins[1]) ?? fail("weights must be an initializer");
      const { kernel, stride, pad } = window();
      if (w.dims.length !== 4 || w.dims[2] !== w.dims[3]) {
        fail(`weights [${w.dims}] must be square OIHW`);
      }
      weights.set(`${out}.weight`, floats(ins[1], "weights"));
      const bias = ins.length > 2 && ins[2] !== "";
      if (bias) weights.set(`${out}.bias`, floats(ins[2], "bias"));
      return layer({
        op: "conv2d",
        channels: w.dims[0],
        kernel: Number.isNaN(kernel) ? w.dims[2] : kernel,
        stride,
        pad,
        groups: int("group", 1),
        bias,
      });
    }
    case "Gemm":
    case "MatMul": {
      const b = consts.get(ins[1]);
      if (!b && op === "MatMul") return layer({ op: "batch_matmul" }, [x, ref(ins[1])]);
      if (!b || b.dims.length !== 2) return fail("the second input must be a 2-D initializer");
      if (int("transA", 0) !== 0) fail("transA is not supported");
      if (a.has("alpha") && a.get("alpha")!.f !== 1) fail("alpha must be 1");
      if (a.has("beta") && a.get("beta")!.f !== 1) fail("beta must be 1");
      const transB = op === "Gemm" && int("transB", 0) === 1;
      const [K, N] = transB ? [b.dims[1], b.dims[0]] : b.dims;
      const src = floats(ins[1], "weights"), w = new Float32Array(N * K);
      for (let n = 0; n < N; n++) {
        for (let k = 0; k < K; k++) w[n * K + k] = transB ? src[n * K + k] : src[k * N + n];
      }
      weights.set(`${out}.weight`, w);
      const bias = op === "Gemm" && ins.length > 2 && ins[2] !== "";
      if (bias) {
        const c = floats(ins[2], "bias");
        if (c.length !== N) fail(`bias of ${c.length} values, expected ${N}`);
        weights.set(`${out}.bias`, c);
      }
      return layer({ op: "dense", units: N, bias });
    }
    case "Relu":
      return layer({ op: "relu" });
    case "Clip": {
      const bound = (i: number, k: string) =>
        ins[i] ? floats(ins[i], k)[0] : a.has(k) ? a.get(k)!.f : undefined;
      const lo = bound(1, "min"), hi = bound(2, "max");
      if (lo === 0 && hi === 6) return layer({ op: "relu6" });
      if (lo === 0 && hi === undefined) return layer({ op: "relu" });
      return fail(`only Clip(0, 6) and Clip(0) are supported, got Clip(${lo}, ${hi})`);
    }
    case "Add": {
      const c = ins.find((t) => consts.has(t));
      const prev = net().layers.find((l) => l.name === x);
      if (c && prev?.op === "dense" && !prev.bias && ins[1] === c) {
        // MatMul + Add of a bias: the dense layer's bias.
        weights.set(`${prev.name}.bias`, floats(c, "bias"));
        prev.bias = true;
        alias.set(out, prev.name);
        return undefined;
      }
      if (c) fail("adding a constant is supported only as the bias of a MatMul");
      return layer({ op: "add" }, [x, ref(ins[1])]);
    }
    case "MaxPool":
    case "AveragePool": {
      const { kernel, stride, pad } = window();
      const ceil = int("ceil_mode", 0) === 1;
      if (op === "AveragePool") {
        if (ceil) fail("ceil_mode is not supported for AveragePool");
        if (pad > 0 && int("count_include_pad", 0) === 0) {
          fail("padded AveragePool must count the padding (count_include_pad=1)");
        }
        return layer({ op: "avg_pool2d", kernel, stride, pad });
      }
      return layer({ op: "max_pool2d", kernel, stride, pad, ceil });
    }
    case "GlobalAveragePool":
      return layer({ op: "global_avg_pool2d" });
    case "Concat": {
      const axis = int("axis", 1);
      if (axis !== 1 && axis !== -3) fail(`only axis 1 (channels) is supported, got ${axis}`);
      return layer({ op: "concat" }, ins.map(ref));
    }
    case "BatchNormalization": {
      ["gamma", "beta", "mean", "var"].forEach((p, i) =>
        weights.set(`${out}.${p}`, floats(ins[i + 1], p))
      );
      return layer({ op: "batch_norm", epsilon: a.has("epsilon") ? a.get("epsilon")!.f : 1e-5 });
    }
    case "Flatten":
      if (int("axis", 1) !== 1) fail("only axis 1 is supported");
      return layer({ op: "flatten" });
    case "Reshape": {
      const target = consts.get(ins[1])?.values ?? fail("the shape must be an initializer");
      const shape = inferShapes(net()).get(x)!;
      const rest = shape.slice(1).reduce((p, d) => p * d, 1);
      if (
        target.length !== 2 || ![0, -1, shape[0]].includes(target[0]) ||
        ![-1, rest].includes(target[1])
      ) fail(`only a reshape to [N, -1] is supported, got [${[...target]}] of [${shape}]`);
      return layer({ op: "flatten" });
    }
    case "Pad": {
      // PyTorch writes a Pad of zeros before some AveragePools: nothing to do.
      const pads = ins[1] ? consts.get(ins[1])?.values : a.get("pads")?.ints;
      if (!pads || [...pads].some((p) => p !== 0)) fail("only a Pad of zeros is supported");
      alias.set(out, x);
      return undefined;
    }
    case "Dropout":
    case "Identity":
      alias.set(out, x);
      return undefined;
    case "Constant": {
      const t = node.attribute?.find((at) => at.name === "value")?.t;
      if (!t) return fail("only tensor constants are supported");
      consts.set(out, { dims: (t.dims ?? []).map(num), values: tensorValues(t) });
      return undefined;
    }
    default:
      return fail("this operator is not supported");
  }
}
