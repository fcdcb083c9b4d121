/**
 * From layers to kernels: the workload of each tunable layer (conv2d as
 * conv2d, depthwise_conv2d or group_conv2d; dense as matmul over transposed
 * weights; batch_matmul), and the tasks of a network, the distinct tunable
 * workloads, each with its weight (how often it occurs), as TVM extracts them.
 *
 * @example
 * ```ts
 * import { extractTasks } from "./tasks.ts";
 * import { resnet18 } from "./builtin.ts";
 * const tasks = extractTasks(resnet18());
 * if (tasks.reduce((a, t) => a + t.weight, 0) !== 21) throw new Error(); // 20 convs, 1 dense
 * ```
 * @module
 */
import { checkInteger, described } from "../ir/check.ts";
import { batchMatmul, depthwiseConv2d, groupConv2d, paddedChannels } from "../ir/nn.ts";
import { conv2d, conv2dNCHWc, matmul, type Workload } from "../ir/workloads.ts";
import { inferShapes, type Layer, type Network, windowOf } from "./network.ts";

/**
 * The input block of a blocked convolution of `C` channels: the
 * {@link convOutputBlock} of `C` when it has one (so the block a convolution
 * writes is the block the next one reads), else the largest divisor of `C`
 * below `block`; 1 (NCHW) when `C` is smaller than `block`. An RGB image
 * stays NCHW: ResNet-18's first layer read it at 133.7 GFLOP/s, and in
 * blocks of 3 (its pixels' channels side by side, a padding copy of 3-wide
 * vectors) at 100.1 (`conv2d-blocked`, interleaved, two threads).
 */
export function inputBlock(C: number, block: number): number {
  if (C < block) return 1;
  const own = convOutputBlock(C, block);
  if (own > 1) return own;
  for (let b = block; b > 1; b--) if (C % b === 0) return b;
  return 1;
}

/**
 * The block that divides `F` channels: the largest multiple of 8 (an AVX2
 * vector) up to `block` that divides `F`, or 1 (NCHW) when there is none;
 * a depthwise convolution's block, and a convolution's where padding does
 * not pay ({@link convOutputBlock}). SqueezeNet's last convolution (1,000
 * channels) would get blocks of 8; read NCHW, it had no template among
 * `conv2d-blocked`'s and ran at 18 GFLOP/s after tuning.
 *
 * @example
 * ```ts
 * import { outputBlock } from "./tasks.ts";
 * if (outputBlock(64, 16) !== 16 || outputBlock(1000, 16) !== 8 || outputBlock(10, 16) !== 1) {
 *   throw new Error();
 * }
 * ```
 */
export function outputBlock(F: number, block: number): number {
  for (let b = block - block % 8; b >= 8; b -= 8) if (F % b === 0) return b;
  return 1;
}

/**
 * The output block of a blocked convolution (not grouped) of `F` channels:
 * `block`, padded ({@link paddedChannels}: the last block's channels past
 * `F` computed from zero weights and zero bias, so zeros), where `block`
 * does not divide `F` and the padding adds at most an eighth; else its
 * {@link outputBlock}. SqueezeNet's 1,000-class convolution writes 63
 * blocks of 16 (1,008 channels) instead of 125 blocks of 8, half an
 * AVX-512 vector each, in which it ran at 0.49 of oneDNN; MobileNet-v2's
 * 24-channel ones keep blocks of 8 (32 would add a third).
 *
 * @example
 * ```ts
 * import { convOutputBlock } from "./tasks.ts";
 * if (convOutputBlock(1000, 16) !== 16 || convOutputBlock(24, 16) !== 8) throw new Error();
 * ```
 */
export function convOutputBlock(F: number, block: number): number {
  if (block > 1 && F > block && (paddedChannels(F, block) - F) * 8 <= F) return block;
  return outputBlock(F, block);
}

/**
 * The tunable workload a layer runs, if it is tunable. With `block` > 1 (a
 * channel-blocked network, TVM's `NCHW16c` after `AlterOpLayout`) a
 * convolution (not grouped) with a {@link convOutputBlock} runs as
 * `conv2d_nchwc`: output blocks of that, input blocks of {@link inputBlock},
 * its channels padded to whole blocks (1,000 become 1,008);
 * a depthwise one as `depthwise_conv2d_nchwc`, its input and output in
 * blocks of its {@link outputBlock}.
 */
export function layerWorkload(l: Layer, ins: number[][], block = 1): Workload | undefined {
  const x = ins[0];
  switch (l.op) {
    case "conv2d": {
      const { kernel, stride, pad } = windowOf(l), F = l.channels!, g = l.groups ?? 1;
      const [N, C, H, W] = x;
      const FB = convOutputBlock(F, block);
      if (g === 1 && FB > 1) {
        // Channels in padded blocks count their padding (paddedChannels).
        const CB = inputBlock(C, block);
        const [CP, FP] = [paddedChannels(C, CB), paddedChannels(F, FB)];
        return conv2dNCHWc(N, CP, H, W, FP, kernel, kernel, stride, pad, CB, FB);
      }
      if (g === 1) return conv2d(N, C, H, W, F, kernel, kernel, stride, pad);
      if (g === C && F === C) {
        // Blocked too where a block divides the channels: input and output blocks alike.
        const DB = block > 1 ? outputBlock(C, block) : 1;
        return depthwiseConv2d(N, C, H, W, kernel, kernel, stride, pad, DB);
      }
      return groupConv2d(N, C, H, W, F, kernel, kernel, stride, pad, g);
    }
    case "dense":
      return matmul(x[0], l.units!, x[1]);
    case "batch_matmul":
      return batchMatmul(x[0], x[1], ins[1][2], x[2]);
    default:
      return undefined;
  }
}

/** A distinct tunable workload of a network. */
export interface Task {
  /** The workload to tune. */
  workload: Workload;
  /** How many layers run it: its weight in the end-to-end latency. */
  weight: number;
  /** Those layers' names. */
  layers: string[];
}

/** `name(shape)`: a workload's identity. */
export const taskKey = (w: Workload): string => `${w.name}(${w.shape.join(",")})`;

/**
 * The tasks of a network in order of first occurrence; with `block` > 1 its
 * convolutions are blocked ({@link layerWorkload}).
 */
export function extractTasks(net: Network, block = 1): Task[] {
  if (typeof net !== "object" || net === null || !Array.isArray(net.layers)) {
    throw new TypeError(
      `net must be a network (builtinNetwork("resnet18")), got ${described(net)}`,
    );
  }
  checkInteger(block, "block", { min: 1 });
  const shapes = inferShapes(net), tasks = new Map<string, Task>();
  for (const l of net.layers) {
    const w = layerWorkload(l, l.inputs.map((n) => shapes.get(n)!), block);
    if (!w) continue;
    const key = taskKey(w), t = tasks.get(key);
    if (t) {
      t.weight++;
      t.layers.push(l.name);
    } else tasks.set(key, { workload: w, weight: 1, layers: [l.name] });
  }
  return [...tasks.values()];
}
