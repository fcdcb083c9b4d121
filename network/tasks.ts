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
import { batchMatmul, depthwiseConv2d, groupConv2d } from "../ir/nn.ts";
import { conv2d, matmul, type Workload } from "../ir/workloads.ts";
import { inferShapes, type Layer, type Network, windowOf } from "./network.ts";

/** The tunable workload a layer runs, if it is tunable. */
export function layerWorkload(l: Layer, ins: number[][]): Workload | undefined {
  const x = ins[0];
  switch (l.op) {
    case "conv2d": {
      const { kernel, stride, pad } = windowOf(l), F = l.channels!, g = l.groups ?? 1;
      const [N, C, H, W] = x;
      if (g === 1) return conv2d(N, C, H, W, F, kernel, kernel, stride, pad);
      if (g === C && F === C) return depthwiseConv2d(N, C, H, W, kernel, kernel, stride, pad);
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

/** The tasks of a network in order of first occurrence. */
export function extractTasks(net: Network): Task[] {
  const shapes = inferShapes(net), tasks = new Map<string, Task>();
  for (const l of net.layers) {
    const w = layerWorkload(l, l.inputs.map((n) => shapes.get(n)!));
    if (!w) continue;
    const key = taskKey(w), t = tasks.get(key);
    if (t) {
      t.weight++;
      t.layers.push(l.name);
    } else tasks.set(key, { workload: w, weight: 1, layers: [l.name] });
  }
  return [...tasks.values()];
}
