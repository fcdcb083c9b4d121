/**
 * What a network holds in memory, sized from its shapes before anything is
 * allocated: every layer's output tensor and weights (float32), summed in
 * layer order, and the measurement buffers of each layer's task. A network
 * past the memory available (`TUNEBOOK_MEM_AVAILABLE`, else `MemAvailable`)
 * is refused with a {@link NetworkError} naming the first layer that goes
 * past it and the estimate, so that an input of `[1,1e7,224,224]`, a dense
 * of 1e9 units or a conv to 1e7 channels is one line, not an uncaught
 * `RangeError` or a process growing until it is killed.
 *
 * @example
 * ```ts
 * import { checkNetworkMemory, networkMemory } from "./memory.ts";
 * import { BUILTIN_NETWORKS } from "./builtin.ts";
 * const net = BUILTIN_NETWORKS.squeezenet1_1({ size: 64 });
 * const rows = networkMemory(net);
 * if (rows[0].op !== "input" || rows.at(-1)!.totalBytes <= rows[0].totalBytes) throw new Error();
 * checkNetworkMemory(net, 2 ** 34); // 16 GiB: fits
 * ```
 * @module
 */
import { formatBytes, memAvailableBytes, workloadBytes } from "../ir/limits.ts";
import { inferShapes, type Network, NetworkError, paramShapes, sizeOf } from "./network.ts";

/** One row of {@link networkMemory}: a layer (or the input) and what it adds. */
export interface LayerMemory {
  /** Layer name (the input's name for the first row). */
  layer: string;
  /** The layer's op, `"input"` for the input. */
  op: string;
  /** Output shape. */
  shape: number[];
  /** Bytes of its output tensor (float32). */
  outputBytes: number;
  /** Bytes of its parameters (weights, bias, batch-norm statistics; float32). */
  weightBytes: number;
  /** Outputs and weights of this row and every row before it. */
  totalBytes: number;
}

/**
 * The memory of `net`, input first then layer by layer, from its shapes
 * alone (nothing is allocated); throws a {@link NetworkError} as
 * `inferShapes` does for a network that does not fit together.
 *
 * @example
 * ```ts
 * import { networkMemory } from "./memory.ts";
 * const rows = networkMemory({
 *   name: "tiny",
 *   input: { name: "x", shape: [1, 3, 8, 8] },
 *   layers: [{ name: "c", op: "conv2d", inputs: ["x"], channels: 4, kernel: 3, pad: 1 }],
 * });
 * if (rows[1].weightBytes !== 4 * (4 * 3 * 3 * 3) || rows[1].outputBytes !== 4 * 4 * 64) {
 *   throw new Error();
 * }
 * ```
 */
export function networkMemory(net: Network): LayerMemory[] {
  const shapes = inferShapes(net);
  const input = net.input.shape;
  const rows: LayerMemory[] = [{
    layer: net.input.name,
    op: "input",
    shape: [...input],
    outputBytes: 4 * sizeOf(input),
    weightBytes: 0,
    totalBytes: 4 * sizeOf(input),
  }];
  for (const l of net.layers) {
    const shape = shapes.get(l.name)!;
    const params = Object.values(paramShapes(l, shapes.get(l.inputs[0])!));
    const weightBytes = 4 * params.reduce((n, s) => n + sizeOf(s), 0);
    const outputBytes = 4 * sizeOf(shape);
    const totalBytes = rows[rows.length - 1].totalBytes + weightBytes + outputBytes;
    rows.push({ layer: l.name, op: l.op, shape, outputBytes, weightBytes, totalBytes });
  }
  return rows;
}

/**
 * Refuses `net` when its tensors and weights ({@link networkMemory}) go past
 * `available` bytes: a {@link NetworkError} naming the first layer (or the
 * input) past it, its output shape and the estimate against the memory.
 *
 * @param net the network
 * @param available bytes available (default `memAvailableBytes()`; unknown: no check)
 * @throws {NetworkError} naming the layer and the estimate
 * @example
 * ```ts
 * import { checkNetworkMemory } from "./memory.ts";
 * import type { Network } from "./network.ts";
 * const net: Network = {
 *   name: "wide",
 *   input: { name: "x", shape: [1, 512] },
 *   layers: [{ name: "fc", op: "dense", inputs: ["x"], units: 1e9 }],
 * };
 * try {
 *   checkNetworkMemory(net, 2 ** 30);
 *   throw new Error("not refused");
 * } catch (e) {
 *   if (!(e as Error).message.startsWith('Layer "fc" (dense)')) throw e;
 * }
 * ```
 */
export function checkNetworkMemory(net: Network, available = memAvailableBytes()): void {
  if (available === undefined) return;
  const over = networkMemory(net).find((r) => r.totalBytes > available);
  if (!over) return;
  const what = over.op === "input"
    ? `Input "${over.layer}" [${over.shape.join(", ")}] needs about ${formatBytes(over.totalBytes)}`
    : `Layer "${over.layer}" (${over.op}): its output [${over.shape.join(", ")}]${
      over.weightBytes > 0 ? ` and weights (${formatBytes(over.weightBytes)})` : ""
    } bring the network to about ${
      formatBytes(over.totalBytes)
    } (float32 tensors and weights so far)`;
  throw new NetworkError(
    `${what}, more than the ${formatBytes(available)} available (MemAvailable)`,
  );
}

/**
 * Refuses a task whose measurement buffers (`workloadBytes`: 3 x inputs + 2
 * x outputs) go past `available` bytes, naming the layer it comes from.
 *
 * @example
 * ```ts
 * import { checkTaskMemory } from "./memory.ts";
 * import { matmul } from "../ir/workloads.ts";
 * checkTaskMemory("fc", matmul(4, 4, 4), 2 ** 20);
 * ```
 */
export function checkTaskMemory(
  layer: string,
  workload: Parameters<typeof workloadBytes>[0],
  available = memAvailableBytes(),
): void {
  if (available === undefined) return;
  const need = workloadBytes(workload);
  if (need > available) {
    throw new NetworkError(
      `Layer "${layer}": its task ${workload.name} ${workload.shape.join(",")} needs about ${
        formatBytes(need)
      } of buffers to measure (3 x inputs + 2 x outputs, float32), more than the ${
        formatBytes(available)
      } available (MemAvailable)`,
    );
  }
}
