/**
 * The executor: a whole network run with native kernels on real tensors.
 * Batch norm is folded into the convolutions first; each layer becomes one or
 * two kernels (a convolution or matmul, then its bias; dense weights are
 * transposed once to matmul's `[K, N]` layout); flatten is a view of the same
 * buffer. Activations are NCHW, or with `block` (`NCHW16c`) the convolutions
 * run on channel blocks (`conv2d_nchwc`) and keep their activations blocked
 * through ReLUs and adds, a `layout_transform` step converting where a
 * layer reads another layout (TVM's `AlterOpLayout`). Tunable kernels use the default schedule unless a trace for their
 * workload is given (a tuned kernel); the others use their default schedule.
 *
 * @example
 * ```ts ignore
 * import { createExecutor } from "./executor.ts";
 * import { randomWeights } from "./weights.ts";
 * import { resnet18 } from "./builtin.ts";
 * const net = resnet18({ size: 32 });
 * const ex = await createExecutor(net, randomWeights(net, 1));
 * const logits = ex.run(new Float32Array(3 * 32 * 32));
 * console.log(logits.length, ex.latency({ repeat: 3 }).medianMs);
 * ex.close();
 * ```
 * @module
 */
import { median } from "../ir/stats.ts";
import { fuseBiasAct } from "../ir/epilogue.ts";
import {
  type Activation,
  ACTIVATIONS,
  avgPool2d,
  biasAct,
  concat,
  eltwise,
  globalAvgPool2d,
  layoutTransform,
  maxPool2d,
  paddedChannels,
} from "../ir/nn.ts";
import { createPrng } from "../ir/prng.ts";
import { rewritesLayout } from "../ir/lower.ts";
import { Schedule } from "../ir/schedule.ts";
import { ScheduleError } from "../ir/errors.ts";
import { replayTrace, type Trace } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";
import { alignedFloat32 } from "../measure/buffers.ts";
import { referenceSchedule } from "../measure/kernel_source.ts";
import { compileSchedules, type NativeKernel, pauseOpenMP } from "./native.ts";
import { inferShapes, type Network, NetworkError, sizeOf, windowOf } from "./network.ts";
import { blockedLength, layoutName } from "./layout.ts";
import { layerWorkload, taskKey } from "./tasks.ts";
import { foldBatchNorm, type Weights } from "./weights.ts";

/** One kernel call: buffers by name (activations, `<layer>.<param>` weights). */
export interface Step {
  /** The layer it belongs to. */
  layer: string;
  /** What it computes. */
  workload: Workload;
  /** Buffers read, in the kernel's input order. */
  inputs: string[];
  /** Buffer written. */
  output: string;
  /** A tunable layer's kernel (a task's workload); else bias, activation, add, pool or concat. */
  tunable: boolean;
  /**
   * A bias and this activation computed in the tuned kernel's output stage
   * ({@link fuseBiasAct}); its inputs end with the bias.
   */
  epilogue?: Activation;
}

/** A buffer that is a slice of another: a concat's input written in place. */
export interface Slice {
  /** The buffer it lies in (the concat's output). */
  of: string;
  /** Its first element there. */
  offset: number;
  /** Its elements. */
  size: number;
}

/** What {@link planSteps} plans. */
export interface StepPlan {
  steps: Step[];
  /** Flatten layers and fused ReLUs: the buffer that holds them. */
  views: Map<string, string>;
  /** Buffers written in place into a concat's output (no step copies them). */
  slices: Map<string, Slice>;
  /** Buffers that no step writes but slices fill: each one's elements. */
  joined: Map<string, number>;
}

/**
 * The kernel calls of a network whose batch norms are folded; `views` maps
 * flatten layers, and ReLUs fused into their producer, to the buffer that
 * holds them. A ReLU (or ReLU6) whose input is a convolution's or dense
 * layer's bias, or a residual add, read by nothing else, runs in that step
 * (TVM's operator fusion of injective consumers). A concat along channels at
 * batch 1 whose inputs are each written by one step and read by nothing
 * else is no step at all: those steps write into its output, each at its
 * channels' offset (`slices`; NCHW at batch 1 keeps each input's channels
 * contiguous there), as TVM's and oneDNN's in-place concat do. SqueezeNet's
 * eight concats are such. With `block` > 1 the convolutions that
 * `layerWorkload` blocks read their input block and write output blocks; a
 * ReLU and a max pool keep their input's layout, an add its inputs' block
 * (converting an NCHW one), so does a concat whose inputs' channels the block
 * divides (each input's blocks in turn: SqueezeNet's fire modules stay
 * blocked, and in place), a global average pool reads blocks and writes
 * `[N][C]`, every other layer reads NCHW; each conversion is planned once
 * per buffer and layout, and the network's output is NCHW. Channels that
 * their block does not divide are padded to whole blocks
 * (`paddedChannels`): the steps on those blocks count the padding, a
 * convolution's weights and bias are padded with zeros (by
 * `createExecutor`), so the padding stays zeros, and a conversion out of
 * the blocks leaves it out (after a global pool too, which pools every
 * lane as vectors).
 *
 * @example
 * ```ts
 * import { planSteps } from "./executor.ts";
 * import { parseNetwork } from "./network.ts";
 * const net = parseNetwork({
 *   name: "fire",
 *   input: { name: "x", shape: [1, 4, 5, 5] },
 *   layers: [
 *     { name: "a", op: "conv2d", inputs: ["x"], channels: 2, kernel: 1, bias: true },
 *     { name: "b", op: "conv2d", inputs: ["x"], channels: 3, kernel: 3, pad: 1, bias: true },
 *     { name: "cat", op: "concat", inputs: ["a", "b"] },
 *     { name: "out", op: "relu", inputs: ["cat"] },
 *   ],
 * });
 * const plan = planSteps(net);
 * if (plan.steps.some((s) => s.workload.name === "concat")) throw new Error();
 * if (plan.slices.get("b")?.offset !== 2 * 25 || plan.joined.get("cat") !== 5 * 25) throw new Error();
 * ```
 */
export function planSteps(net: Network, block = 1): StepPlan {
  const shapes = inferShapes(net), steps: Step[] = [], views = new Map<string, string>();
  const buf = (n: string) => views.get(n) ?? n;
  /** Each buffer's channel block (absent: 1, NCHW). */
  const layouts = new Map<string, number>();
  const layoutOf = (b: string) => layouts.get(b) ?? 1;
  /**
   * Buffer `b` (a tensor of NCHW shape `shape`) in the layout of block `to`:
   * itself, or its conversion (`layout_transform`), planned once however
   * many layers read it.
   */
  const as = (b: string, shape: number[], to: number, layer: string): string => {
    const from = layoutOf(b);
    if (from === to) return b;
    const name = `${b}@${layoutName(to)}`;
    if (!layouts.has(name)) {
      const [N, C, H, W] = shape;
      steps.push({
        layer,
        workload: layoutTransform(N, C, H, W, from, to),
        inputs: [b],
        output: name,
        tunable: false,
      });
      layouts.set(name, to);
    }
    return name;
  };
  const readers = new Map<string, number>();
  for (const l of net.layers) for (const n of l.inputs) readers.set(n, (readers.get(n) ?? 0) + 1);
  const outName = net.output ?? net.layers[net.layers.length - 1]?.name;
  /** The activation fused into layer `l`'s last step, and the ReLU layer it absorbs. */
  const fusedAct = (l: Network["layers"][number]): Activation => {
    if (readers.get(l.name) !== 1 || l.name === outName) return "none";
    const r = net.layers.find((x) => x.inputs.includes(l.name))!;
    if ((r.op !== "relu" && r.op !== "relu6") || r.inputs.length !== 1) return "none";
    fused.add(r.name);
    views.set(r.name, l.name);
    return r.op;
  };
  const fused = new Set<string>();
  for (const l of net.layers) {
    if (fused.has(l.name)) continue;
    const ins = l.inputs.map((n) => shapes.get(n)!), x = ins[0], out = shapes.get(l.name)!;
    const tunable = layerWorkload(l, ins, block);
    // A blocked tunable layer (it has a `channelBlock`) reads the block of
    // its input tensor's last axis; a ReLU and a max pool run on what they
    // get, an add on its inputs' block (an NCHW input converted to it), a
    // global pool on blocks too (its output `[N][C]`); every other layer
    // reads NCHW.
    const blocked = tunable?.channelBlock !== undefined;
    const readBlock = blocked ? tunable.inputs[0].shape.at(-1)! : 1;
    const given = [...new Set(l.inputs.map((n) => layoutOf(buf(n))))].filter((b) => b > 1);
    const keeps = ["relu", "relu6", "max_pool2d", "global_avg_pool2d"].includes(l.op);
    // A concat along channels whose inputs the block divides is the same
    // concat of whole blocks, `[N][C/b][H*W*b]`: it keeps them too.
    const joins = l.op === "add" ||
      l.op === "concat" && given.length === 1 && ins.every((s) => s[1] % given[0] === 0);
    const want = (i: number) =>
      blocked
        ? (i === 0 ? readBlock : 1)
        : keeps
        ? layoutOf(buf(l.inputs[i]))
        : joins && given.length === 1
        ? given[0]
        : 1;
    const inputs = l.inputs.map((n, i) => as(buf(n), ins[i], want(i), l.name));
    const inBlock = want(0);
    if (!blocked) layouts.set(l.name, l.op === "global_avg_pool2d" ? 1 : inBlock);
    const step = (workload: Workload, i: string[], o = l.name) =>
      steps.push({ layer: l.name, workload, inputs: i, output: o, tunable: workload === tunable });
    switch (l.op) {
      case "conv2d":
      case "dense": {
        const hasBias = l.op === "dense" ? l.bias ?? true : !!l.bias;
        const w = l.op === "dense" ? `${l.name}.weight.T` : `${l.name}.weight`;
        const FB = blocked ? tunable.channelBlock! : 1;
        step(tunable!, [inputs[0], w], hasBias ? `${l.name}#pre` : l.name);
        if (hasBias) {
          const S = out.length === 4 ? out[2] * out[3] : 1;
          step(biasAct(out[0], paddedChannels(out[1], FB), S, fusedAct(l), FB), [
            `${l.name}#pre`,
            `${l.name}.bias`,
          ]);
        }
        for (const b of [`${l.name}#pre`, l.name]) if (FB > 1) layouts.set(b, FB);
        break;
      }
      case "batch_matmul":
        step(tunable!, inputs);
        break;
      case "relu":
      case "relu6":
        step(eltwise(blockedLength(x, inBlock), l.op, 1), inputs);
        break;
      case "add":
        step(eltwise(blockedLength(x, inBlock), fusedAct(l), 2), inputs);
        break;
      case "max_pool2d": {
        const { kernel, stride, pad } = windowOf(l);
        step(
          maxPool2d(
            x[0],
            paddedChannels(x[1], inBlock),
            x[2],
            x[3],
            kernel,
            stride,
            pad,
            l.ceil ? 1 : 0,
            inBlock,
          ),
          inputs,
        );
        break;
      }
      case "avg_pool2d": {
        const { kernel, stride, pad } = windowOf(l);
        step(avgPool2d(x[0], x[1], x[2], x[3], kernel, stride, pad), inputs);
        break;
      }
      case "global_avg_pool2d":
        if (x[1] % inBlock !== 0) {
          // Padded blocks: pool every lane (vectors), then leave the padding out.
          const [N, C] = x, pooled = `${l.name}#padded`;
          step(globalAvgPool2d(N, paddedChannels(C, inBlock), x[2], x[3], inBlock), inputs, pooled);
          step(layoutTransform(N, C, 1, 1, inBlock, 1), [pooled]);
        } else step(globalAvgPool2d(x[0], x[1], x[2], x[3], inBlock), inputs);
        break;
      case "concat":
        step(concat(x[0], ins.map((s) => s[1] / inBlock), x[2] * x[3] * inBlock), inputs);
        break;
      case "flatten":
        views.set(l.name, inputs[0]); // NCHW (converted above where blocked)
        break;
      case "batch_norm":
        throw new NetworkError(`Layer "${l.name}": fold batch norm before planning`);
    }
  }
  // The network's output is NCHW.
  if (outName !== undefined && layoutOf(buf(outName)) !== 1) {
    views.set(outName, as(buf(outName), shapes.get(outName)!, 1, outName));
  }
  const { slices, joined } = concatInPlace(steps, buf(outName ?? ""), net.input.name);
  return { steps: steps.filter((s) => !joined.has(s.output)), views, slices, joined };
}

/** The concats of {@link planSteps} done in place: their inputs' slices of their outputs. */
function concatInPlace(
  steps: Step[],
  output: string,
  input: string,
): { slices: Map<string, Slice>; joined: Map<string, number> } {
  const slices = new Map<string, Slice>(), joined = new Map<string, number>();
  const writers = new Map<string, number>(), readers = new Map<string, number>();
  for (const s of steps) {
    writers.set(s.output, (writers.get(s.output) ?? 0) + 1);
    for (const n of s.inputs) readers.set(n, (readers.get(n) ?? 0) + 1);
  }
  for (const s of steps) {
    const w = s.workload;
    if (w.name !== "concat" || w.shape[0] !== 1 || s.output === output) continue;
    const ins = s.inputs;
    const alone = (n: string) =>
      writers.get(n) === 1 && readers.get(n) === 1 && n !== output && n !== input &&
      !slices.has(n) && !joined.has(n);
    if (new Set(ins).size !== ins.length || !ins.every(alone)) continue;
    let offset = 0;
    ins.forEach((n, i) => {
      const size = w.inputs[i].size;
      slices.set(n, { of: s.output, offset, size });
      offset += size;
    });
    joined.set(s.output, w.outputs[0].size);
  }
  return { slices, joined };
}

/**
 * Steps with each tuned kernel's bias step folded into it where its trace
 * allows ({@link fuseBiasAct}: the trace computes its output in a local tile
 * and copies it out): the kernel then writes `act(output + bias)` itself and
 * the bias step is gone (TVM's fused conv2d + bias + ReLU). A bias step whose
 * input something else reads, or a kernel without a trace, stays as it was.
 *
 * @example
 * ```ts
 * import { fuseEpilogues, planSteps } from "./executor.ts";
 * import { parseNetwork } from "./network.ts";
 * const net = parseNetwork({
 *   name: "one",
 *   input: { name: "x", shape: [1, 16, 8, 8] },
 *   layers: [{ name: "c", op: "conv2d", inputs: ["x"], channels: 16, kernel: 3, pad: 1, bias: true }],
 * });
 * const steps = planSteps(net).steps;
 * // No tuned trace: the bias keeps its step.
 * if (fuseEpilogues(steps, new Map()).length !== 2) throw new Error();
 * ```
 */
export function fuseEpilogues(steps: Step[], traces: Map<string, Trace>): Step[] {
  const readers = new Map<string, number>();
  for (const s of steps) for (const n of s.inputs) readers.set(n, (readers.get(n) ?? 0) + 1);
  const out: Step[] = [];
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i], next = steps[i + 1];
    const trace = s.tunable ? traces.get(taskKey(s.workload)) : undefined;
    const act = next?.workload.name === "bias_act"
      ? ACTIVATIONS[next.workload.shape[3]]
      : undefined;
    if (
      trace && next && act && next.inputs[0] === s.output && readers.get(s.output) === 1 &&
      fuseBiasAct(trace, act)
    ) {
      out.push({ ...s, inputs: [...s.inputs, next.inputs[1]], output: next.output, epilogue: act });
      i++;
      continue;
    }
    out.push(s);
  }
  return out;
}

/** Options of {@link createExecutor}. */
export interface ExecutorOptions {
  /** Tuned schedules by task key (`taskKey(workload)`); others use the default schedule. */
  traces?: Map<string, Trace>;
  /** Fold bias steps into the tuned kernels ({@link fuseEpilogues}). Default true. */
  fuseEpilogues?: boolean;
  /** Kernel cache directory. Default `.cache/network-kernels`. */
  cacheDir?: string;
  /**
   * Channel block of the convolutions' activations (1: NCHW, the default;
   * 16: `NCHW16c`, see {@link planSteps}); `traces` then hold the blocked
   * tasks' schedules (`extractTasks(net, block)`).
   */
  block?: number;
}

/** End-to-end latency of {@link Executor.latency}. */
export interface Latency {
  /** Median over the repeats, in milliseconds. */
  medianMs: number;
  /** Every repeat's time, in milliseconds. */
  timesMs: number[];
}

/** One kernel call's time in {@link Executor.profile}. */
export interface StepTime {
  /** The layer it belongs to. */
  layer: string;
  /** Its workload (`taskKey`: `conv2d(1,64,56,56,64,3,3,1,1)`, `bias_act(...)`). */
  kernel: string;
  /** A tunable layer's kernel. */
  tunable: boolean;
  /** Median over the passes, in milliseconds. */
  medianMs: number;
}

/** A network compiled to native kernels. */
export interface Executor {
  /** The kernel calls, in order. */
  readonly steps: Step[];
  /** Kernels compiled (distinct workloads; one per layer for a kernel that rewrites its weights' layout). */
  readonly kernelCount: number;
  /** How many distinct workloads replay a given trace (tuned) rather than the default schedule. */
  readonly tracedCount: number;
  /** Runs the network on an NCHW input; returns (a copy of) the output. */
  run(input: Float32Array): Float32Array;
  /** Times whole forward passes (the kernels' calls, no compilation) after `warmup` ones. */
  latency(options?: { repeat?: number; warmup?: number }): Latency;
  /**
   * Times each kernel call of `repeat` forward passes (after `warmup` ones),
   * in step order: where a pass's time goes (TVM's debug executor), and the
   * cache state each step finds inside a pass. The steps' sum differs from
   * {@link latency} by the timer's cost per call and, on a noisy machine, by
   * the spikes that a per-step median leaves out (on ResNet-18, 2026-12-03:
   * 19.1 against 21.7 ms in one run, 24.7 against 24.5 in another).
   */
  profile(options?: { repeat?: number; warmup?: number }): StepTime[];
  /**
   * Times each kernel call by itself, as a tuner times a kernel: `repeat`
   * calls of that one step back to back (after `warmup` ones), in step order.
   * With `cold`, before each timed call a buffer of `flushBytes` (default
   * the bytes of all the network's buffers, weights and activations: what
   * the rest of a forward pass touches between two calls of a step) is
   * written and then the step's activations (inputs some earlier step wrote,
   * or the network's input) read again: its weights and output are where a
   * forward pass leaves them, its activations in cache, as the layer before
   * left them.
   */
  isolated(
    options?: { repeat?: number; warmup?: number; cold?: boolean; flushBytes?: number },
  ): StepTime[];
  /** Unloads the kernels. */
  close(): void;
}

/** Compiles a network (batch norm folded) with its weights into an {@link Executor}. */
export async function createExecutor(
  net: Network,
  weights: Weights,
  options: ExecutorOptions = {},
): Promise<Executor> {
  const folded = foldBatchNorm(net, weights);
  const fnet = folded.network;
  const plan = planSteps(fnet, options.block ?? 1);
  const { views, slices, joined } = plan;
  const steps = options.fuseEpilogues === false || !options.traces
    ? plan.steps
    : fuseEpilogues(plan.steps, options.traces);
  // Distinct kernels by workload identity (name and shape); a kernel that
  // rewrites the layout of its weights gets one instance per layer, which
  // keeps that layer's rewritten weights (see network/native.ts).
  const kernelIndex = new Map<string, number>(), schedules: Schedule[] = [];
  const instances: (string | undefined)[] = [];
  const traced = new Set<string>();
  /** Workloads (by identity) whose kernel rewrites its weights' layout. */
  const rewrites = new Set<string>();
  const identity = (s: Step) =>
    `${taskKey(s.workload)}/${s.workload.inputs.map((t) => t.shape).join(";")}${
      s.epilogue ? `+bias_${s.epilogue}` : ""
    }`;
  const keyOf = (s: Step, i: number) =>
    rewrites.has(identity(s)) ? `${identity(s)}#${i}` : identity(s);
  steps.forEach((s, i) => {
    const shared = identity(s);
    const trace = options.traces?.get(taskKey(s.workload));
    // Tunable layers untuned run their default nest; the other steps (bias,
    // ReLU, adds, pools) the parallel nest of the reference kernels.
    const make = () =>
      trace && s.epilogue
        ? fuseBiasAct(trace, s.epilogue)!
        : trace
        ? replayTrace(trace, { prng: createPrng(0) })
        : s.tunable
        ? new Schedule(s.workload, { prng: createPrng(0) })
        : stepSchedule(s.workload);
    // The first step of a workload decides whether its layers share one kernel.
    const first = kernelIndex.has(shared) || rewrites.has(shared) ? undefined : make();
    if (first && rewritesLayout(first)) rewrites.add(shared);
    const key = keyOf(s, i);
    if (kernelIndex.has(key)) return;
    kernelIndex.set(key, schedules.length);
    if (trace) traced.add(shared);
    schedules.push(first ?? make());
    instances.push(rewrites.has(shared) ? `layer ${i}` : undefined);
  });
  const tracedCount = traced.size;
  const kernels = await compileSchedules(schedules, { cacheDir: options.cacheDir, instances });
  // Buffers: the input, every step's output, and the weights (aligned copies).
  const buffers = new Map<string, Float32Array>();
  const input = alignedFloat32(sizeOf(fnet.input.shape));
  buffers.set(fnet.input.name, input);
  for (const [key, v] of folded.weights) buffers.set(key, aligned(v));
  // A convolution on padded blocks (paddedChannels) reads its weights and
  // bias padded with zeros, so that its padding channels compute zeros.
  for (const s of plan.steps) {
    s.inputs.forEach((n, i) => {
      const want = s.workload.inputs[i]?.shape, have = folded.weights.get(n);
      if (want && have && have.length !== want.reduce((a, b) => a * b, 1)) {
        buffers.set(n, padWeights(have, want, fnet.layers.find((l) => l.name === s.layer)!));
      }
    });
  }
  for (const l of fnet.layers) {
    if (l.op !== "dense") continue;
    const w = folded.weights.get(`${l.name}.weight`)!, U = l.units!, K = w.length / U;
    const t = alignedFloat32(w.length);
    for (let u = 0; u < U; u++) for (let k = 0; k < K; k++) t[k * U + u] = w[u * K + k];
    buffers.set(`${l.name}.weight.T`, t);
  }
  for (const [name, size] of joined) buffers.set(name, alignedFloat32(size));
  for (const s of steps) {
    const slice = slices.get(s.output);
    buffers.set(
      s.output,
      slice
        ? buffers.get(slice.of)!.subarray(slice.offset, slice.offset + slice.size)
        : alignedFloat32(s.workload.outputs[0].size),
    );
  }
  const calls: [NativeKernel, Float32Array[]][] = steps.map((s, i) => {
    const k = kernels[kernelIndex.get(keyOf(s, i))!];
    return [k, [
      ...s.inputs.map((n) => buffers.get(n)!),
      buffers.get(s.output)!,
    ]];
  });
  const outName = fnet.output ?? fnet.layers[fnet.layers.length - 1].name;
  const outBuf = buffers.get(views.get(outName) ?? outName)!;
  const forward = () => {
    for (const [k, bufs] of calls) k.runPrepared(bufs);
  };
  // Bytes of every buffer but the slices (a concat's inputs lie in its output).
  let networkBytes = 0;
  for (const [name, b] of buffers) if (!slices.has(name)) networkBytes += b.byteLength;
  return {
    steps,
    kernelCount: kernels.length,
    tracedCount,
    run(x: Float32Array): Float32Array {
      if (x.length !== input.length) {
        throw new RangeError(`Input needs ${input.length} values [${fnet.input.shape}]`);
      }
      input.set(x);
      forward();
      return outBuf.slice();
    },
    latency({ repeat = 10, warmup = 1 } = {}): Latency {
      for (let i = 0; i < warmup; i++) forward();
      const timesMs: number[] = [];
      for (let i = 0; i < repeat; i++) {
        const t0 = performance.now();
        forward();
        timesMs.push(performance.now() - t0);
      }
      return { medianMs: median(timesMs), timesMs };
    },
    profile({ repeat = 10, warmup = 1 } = {}): StepTime[] {
      for (let i = 0; i < warmup; i++) forward();
      const times = calls.map(() => [] as number[]);
      for (let r = 0; r < repeat; r++) {
        calls.forEach(([k, bufs], i) => {
          const t0 = performance.now();
          k.runPrepared(bufs);
          times[i].push(performance.now() - t0);
        });
      }
      return steps.map((s, i) => stepTime(s, times[i]));
    },
    isolated({ repeat = 10, warmup = 1, cold = false, flushBytes } = {}): StepTime[] {
      const written = new Set([fnet.input.name, ...steps.map((s) => s.output)]);
      const flush = cold ? new Float32Array((flushBytes ?? networkBytes) >> 2) : undefined;
      let sink = 0;
      const out = steps.map((s, i) => {
        const [k, bufs] = calls[i];
        const activations = s.inputs.flatMap((n, j) => written.has(n) ? [bufs[j]] : []);
        for (let w = 0; w < warmup; w++) k.runPrepared(bufs);
        const times: number[] = [];
        for (let r = 0; r < repeat; r++) {
          if (flush) {
            flush.fill(r + 1);
            for (const a of activations) for (let e = 0; e < a.length; e += 16) sink += a[e];
          }
          const t0 = performance.now();
          k.runPrepared(bufs);
          times.push(performance.now() - t0);
        }
        return stepTime(s, times);
      });
      readSink += sink; // keeps the reads
      return out;
    },
    close: () => {
      pauseOpenMP();
      kernels.forEach((k) => k.close());
    },
  };
}

/** A step's {@link StepTime} from its timed calls (ms). */
function stepTime(s: Step, times: number[]): StepTime {
  return {
    layer: s.layer,
    kernel: taskKey(s.workload),
    tunable: s.tunable,
    medianMs: median(times),
  };
}

/** What {@link Executor.isolated}'s reads of activations add up to (so that they are not optimised away). */
let readSink = 0;

/**
 * The schedule of a step that is not tuned: the reference's parallel nest,
 * except a blocked max pool (`max_pool2d` on `[N][C/B][H][W][B]`), which
 * reads its input in place (the padding inlined: no padded copy) and runs
 * rows of blocks in parallel, a vector of the block's channels each. On
 * ResNet-18's 64x112x112 3x3/2 pool that ran in 0.23-0.40 ms against the
 * reference nest's 0.40-0.56 (three alternations of 500 calls, two threads).
 *
 * @example
 * ```ts
 * import { stepSchedule } from "./executor.ts";
 * import { maxPool2d } from "../ir/nn.ts";
 * const sch = stepSchedule(maxPool2d(1, 32, 16, 16, 3, 2, 1, 0, 16));
 * if (sch.stages.some((s) => s.name === "P" && s.attach.k !== "inline")) throw new Error("copied");
 * ```
 */
export function stepSchedule(w: Workload): Schedule {
  if (w.name !== "max_pool2d" || w.shape.length < 9) return referenceSchedule(w);
  try {
    const sch = new Schedule(w, { prng: createPrng(0) });
    if (sch.stages.some((s) => s.name === "P")) sch.computeInline("P");
    for (const stage of ["R", "O"]) {
      sch.parallel(stage, sch.fuse(stage, ["n", "c", "y"]));
      sch.vectorize(stage, "b");
    }
    return sch;
  } catch (e) {
    if (!(e instanceof ScheduleError)) throw e;
    return referenceSchedule(w);
  }
}

/**
 * A convolution's weights `[F][C][KH][KW]` (or bias `[F]`) in the padded
 * shape `to` (`[FP][CP][KH][KW]`, `[FP]`), zeros in the padding.
 */
function padWeights(v: Float32Array, to: number[], layer: Network["layers"][number]): Float32Array {
  const t = alignedFloat32(to.reduce((a, b) => a * b, 1));
  if (to.length === 1) {
    t.set(v);
    return t;
  }
  const F = layer.channels!, taps = to[2] * to[3], C = v.length / (F * taps);
  for (let f = 0; f < F; f++) {
    for (let c = 0; c < C; c++) {
      t.set(v.subarray((f * C + c) * taps, (f * C + c + 1) * taps), (f * to[1] + c) * taps);
    }
  }
  return t;
}

function aligned(v: Float32Array): Float32Array {
  const a = alignedFloat32(v.length);
  a.set(v);
  return a;
}
