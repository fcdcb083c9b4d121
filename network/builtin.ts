/**
 * The built-in networks, layer for layer as torchvision defines them:
 * ResNet-18, MobileNet-v2 and SqueezeNet 1.1 (batch 1, 224x224 by default;
 * smaller inputs for tests). Dropout is left out (inference).
 *
 * @example
 * ```ts
 * import { builtinNetwork } from "./builtin.ts";
 * const net = builtinNetwork("resnet18");
 * if (net.layers.filter((l) => l.op === "conv2d").length !== 20) throw new Error();
 * ```
 * @module
 */
import type { Layer, Network } from "./network.ts";

/** Options of the built-in networks. */
export interface BuiltinOptions {
  /** Batch size. Default 1. */
  batch?: number;
  /** Input height and width. Default 224. */
  size?: number;
  /** Classes of the classifier. Default 1000. */
  classes?: number;
}

/** Appends layers, each reading the previous one unless told otherwise. */
class Builder {
  readonly layers: Layer[] = [];
  last: string;
  constructor(readonly input: string) {
    this.last = input;
  }
  add(name: string, op: Layer["op"], attrs: Partial<Layer> = {}, inputs = [this.last]): string {
    this.layers.push({ name, op, inputs, ...attrs });
    return (this.last = name);
  }
  /** conv2d (no bias), batch norm, and an activation unless `act` is "none". */
  convBn(
    name: string,
    channels: number,
    kernel: number,
    stride: number,
    act: "relu" | "relu6" | "none",
    groups = 1,
    from = this.last,
  ): string {
    const pad = (kernel - 1) >> 1;
    this.add(`${name}_conv`, "conv2d", { channels, kernel, stride, pad, groups }, [from]);
    this.add(`${name}_bn`, "batch_norm");
    return act === "none" ? this.last : this.add(`${name}_${act}`, act);
  }
}

function network(name: string, o: BuiltinOptions, b: Builder): Network {
  return {
    name,
    input: { name: b.input, shape: [o.batch ?? 1, 3, o.size ?? 224, o.size ?? 224] },
    layers: b.layers,
  };
}

/** ResNet-18 (He et al. 2016; torchvision `resnet18`). */
export function resnet18(o: BuiltinOptions = {}): Network {
  const b = new Builder("data");
  b.convBn("conv1", 64, 7, 2, "relu");
  b.add("maxpool", "max_pool2d", { kernel: 3, stride: 2, pad: 1 });
  let channels = 64;
  for (const [stage, width] of [64, 128, 256, 512].entries()) {
    for (let block = 0; block < 2; block++) {
      const stride = stage > 0 && block === 0 ? 2 : 1, p = `layer${stage + 1}_${block}`;
      const input = b.last;
      b.convBn(`${p}_1`, width, 3, stride, "relu");
      const main = b.convBn(`${p}_2`, width, 3, 1, "none");
      const skip = stride !== 1 || channels !== width
        ? b.convBn(`${p}_down`, width, 1, stride, "none", 1, input)
        : input;
      b.add(`${p}_add`, "add", {}, [main, skip]);
      b.add(`${p}_relu`, "relu");
      channels = width;
    }
  }
  b.add("avgpool", "global_avg_pool2d");
  b.add("flatten", "flatten");
  b.add("fc", "dense", { units: o.classes ?? 1000 });
  return network("resnet18", o, b);
}

/** MobileNet-v2 (Sandler et al. 2018; torchvision `mobilenet_v2`, width 1.0). */
export function mobilenetV2(o: BuiltinOptions = {}): Network {
  const b = new Builder("data");
  b.convBn("features0", 32, 3, 2, "relu6");
  let inp = 32, i = 1;
  const settings = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [
    6,
    160,
    3,
    2,
  ], [6, 320, 1, 1]];
  for (const [t, c, n, s] of settings) {
    for (let j = 0; j < n; j++, i++) {
      const stride = j === 0 ? s : 1, hidden = inp * t, input = b.last, p = `features${i}`;
      if (t !== 1) b.convBn(`${p}_expand`, hidden, 1, 1, "relu6");
      b.convBn(`${p}_dw`, hidden, 3, stride, "relu6", hidden);
      const out = b.convBn(`${p}_project`, c, 1, 1, "none");
      if (stride === 1 && inp === c) b.add(`${p}_add`, "add", {}, [out, input]);
      inp = c;
    }
  }
  b.convBn(`features${i}`, 1280, 1, 1, "relu6");
  b.add("avgpool", "global_avg_pool2d");
  b.add("flatten", "flatten");
  b.add("classifier", "dense", { units: o.classes ?? 1000 });
  return network("mobilenet_v2", o, b);
}

/** SqueezeNet 1.1 (Iandola et al. 2016; torchvision `squeezenet1_1`). */
export function squeezenet1_1(o: BuiltinOptions = {}): Network {
  const b = new Builder("data");
  const conv = (name: string, channels: number, kernel: number, from: string, stride = 1) => {
    const pad = kernel === 3 && stride === 1 ? 1 : 0;
    b.add(`${name}_conv`, "conv2d", { channels, kernel, stride, pad, bias: true }, [from]);
    return b.add(`${name}_relu`, "relu");
  };
  const pool = (name: string) => b.add(name, "max_pool2d", { kernel: 3, stride: 2, ceil: true });
  const fire = (name: string, squeeze: number, expand: number) => {
    const s = conv(`${name}_squeeze`, squeeze, 1, b.last);
    const e1 = conv(`${name}_expand1x1`, expand, 1, s);
    const e3 = conv(`${name}_expand3x3`, expand, 3, s);
    b.add(`${name}_concat`, "concat", {}, [e1, e3]);
  };
  conv("features0", 64, 3, b.last, 2);
  pool("features2");
  fire("features3", 16, 64);
  fire("features4", 16, 64);
  pool("features5");
  fire("features6", 32, 128);
  fire("features7", 32, 128);
  pool("features8");
  fire("features9", 48, 192);
  fire("features10", 48, 192);
  fire("features11", 64, 256);
  fire("features12", 64, 256);
  conv("classifier1", o.classes ?? 1000, 1, b.last);
  b.add("avgpool", "global_avg_pool2d");
  b.add("flatten", "flatten");
  return network("squeezenet1_1", o, b);
}

/** The built-in networks by name. */
export const BUILTIN_NETWORKS: Record<string, (o?: BuiltinOptions) => Network> = {
  resnet18,
  mobilenet_v2: mobilenetV2,
  squeezenet1_1,
};

/** A built-in network by name; a RangeError lists the known names. */
export function builtinNetwork(name: string, o: BuiltinOptions = {}): Network {
  const f = Object.hasOwn(BUILTIN_NETWORKS, name) ? BUILTIN_NETWORKS[name] : undefined;
  if (!f) {
    throw new RangeError(
      `Unknown network ${JSON.stringify(name)}; built in: ${
        Object.keys(BUILTIN_NETWORKS).join(", ")
      }`,
    );
  }
  return f(o);
}
