/**
 * End to end: a network compiled with given (tuned) traces, run once on a
 * seeded input, optionally checked against the reference executor, and timed
 * over whole forward passes. What `tune-network` reports beside its estimate
 * and what `bench/network_peers.ts` sets against PyTorch.
 *
 * @example
 * ```ts ignore
 * import { measureEndToEnd } from "./end_to_end.ts";
 * import { builtinNetwork } from "./builtin.ts";
 * import { randomWeights } from "./weights.ts";
 * const net = builtinNetwork("squeezenet1_1", { size: 64 });
 * const r = await measureEndToEnd(net, randomWeights(net, 1), { check: true, repeat: 3 });
 * console.log(r.latencyMs, r.matchesReference);
 * ```
 * @module
 */
import { checkObject, described } from "../ir/check.ts";
import type { Trace } from "../ir/trace.ts";
import { fillUniform } from "../measure/prng.ts";
import { createExecutor, type StepTime } from "./executor.ts";
import { type Network, sizeOf } from "./network.ts";
import { referenceRun } from "./reference.ts";
import type { Weights } from "./weights.ts";

/** Options of {@link measureEndToEnd}. */
export interface EndToEndOptions {
  /** Tuned traces by task key (`taskKey`); other kernels use default schedules. */
  traces?: Map<string, Trace>;
  /** Timed forward passes. Default 5. */
  repeat?: number;
  /** Untimed forward passes first. Default 1. */
  warmup?: number;
  /** Seed of the input. Default 1. */
  seed?: number;
  /** Compare the output with the reference executor. Default false. */
  check?: boolean;
  /** Kernel cache of the executor. Default `.cache/network-kernels` of the repository. */
  cacheDir?: string;
  /** Also time each kernel call over `repeat` passes (the executor's `profile`). Default false. */
  profile?: boolean;
  /** Channel block of the convolutions' activations (`ExecutorOptions.block`). Default 1 (NCHW). */
  block?: number;
  /**
   * Also time every step by itself (`Executor.isolated`), in a forward pass
   * (`Executor.profile`: the cache state each step finds there) and with a
   * pass's bytes flushed before each call (`isolated({ cold: true })`),
   * `repeat` calls each, for {@link networkEstimate}. Default false.
   */
  isolated?: boolean;
}

/** What {@link measureEndToEnd} measured. */
export interface EndToEnd {
  /** Median forward pass, milliseconds. */
  latencyMs: number;
  /** Every timed pass, milliseconds. */
  timesMs: number[];
  /** Kernels compiled, and how many of them replay a given trace. */
  kernels: number;
  /** Kernels that replay a given (tuned) trace. */
  tuned: number;
  /** Kernel calls of a forward pass. */
  kernelCalls: number;
  /** Seconds to compile the network. */
  compileSeconds: number;
  /** With `check`: largest |output - reference| over the largest |reference|. */
  maxRelativeError?: number;
  /** With `check`: that error is at most 1e-4. */
  matchesReference?: boolean;
  /** With `profile`: each kernel call's median time, in step order. */
  profile?: StepTime[];
  /**
   * With `isolated`: each step timed by itself (`hot`), inside forward passes
   * (`inPass`) and by itself after a pass's bytes were flushed (`cold`).
   */
  isolated?: { hot: StepTime[]; inPass: StepTime[]; cold: StepTime[] };
}

/**
 * The network estimate's parts, ms: the tuned kernels as the tuner recorded
 * them, the steps outside them (bias, activations, adds, pools, layout
 * changes, untuned layers) timed by themselves, and what the cache state
 * inside a forward pass adds to every step (its time in that state less its
 * time by itself). The time in that state is best taken inside passes
 * (`Executor.profile`, as TVM's debug executor times a layer); a flush
 * between isolated calls (`Executor.isolated({ cold: true })`) emulates it
 * without the rest of the network, and costs more than a pass does (on
 * ResNet-18, 2026-12-03: 5-12 ms of cache state against 2.8-3.5 in a pass;
 * bench/results/network_estimate.md).
 */
export interface NetworkEstimate {
  /** Sum over tasks of weight x recorded latency (`tune-network`'s `estimateMs`). */
  tunerMs: number;
  /** The steps outside the tuned kernels, each timed by itself. */
  otherStepsMs: number;
  /** Every step's time in a forward pass's cache state less its time by itself (may be < 0). */
  coldExtraMs: number;
  /** tunerMs + otherStepsMs + coldExtraMs. */
  networkMs: number;
  /** The tuned kernels' steps timed again now, each by itself (in place of the records' figures). */
  tunedNowMs: number;
  /**
   * tunedNowMs + otherStepsMs + coldExtraMs: the estimate from figures taken
   * now, so that a machine whose speed drifted since the records were taken
   * does not move it.
   */
  retimedMs: number;
}

/**
 * The network estimate ({@link NetworkEstimate}) from the tuner's figure and
 * each step's time by itself (`hot`, `Executor.isolated`) and in a forward
 * pass's cache state (`cold`: `Executor.profile`, or the flushed
 * `Executor.isolated({ cold: true })`), both in step order.
 *
 * @example
 * ```ts
 * import { networkEstimate } from "./end_to_end.ts";
 * const hot = [
 *   { layer: "c", kernel: "conv", tunable: true, medianMs: 2 },
 *   { layer: "r", kernel: "relu", tunable: false, medianMs: 0.5 },
 * ];
 * const cold = [{ ...hot[0], medianMs: 2.5 }, { ...hot[1], medianMs: 0.75 }];
 * const e = networkEstimate(2.1, hot, cold);
 * if (e.otherStepsMs !== 0.5 || e.coldExtraMs !== 0.75 || e.networkMs !== 3.35) throw new Error();
 * if (e.tunedNowMs !== 2 || e.retimedMs !== 3.25) throw new Error();
 * ```
 * @throws {RangeError} when `hot` and `cold` differ in length
 */
export function networkEstimate(
  tunerMs: number,
  hot: readonly StepTime[],
  cold: readonly StepTime[],
): NetworkEstimate {
  if (hot.length !== cold.length) {
    throw new RangeError(`hot has ${hot.length} steps and cold ${cold.length}`);
  }
  let otherStepsMs = 0, coldExtraMs = 0, tunedNowMs = 0;
  hot.forEach((s, i) => {
    if (s.tunable) tunedNowMs += s.medianMs;
    else otherStepsMs += s.medianMs;
    coldExtraMs += cold[i].medianMs - s.medianMs;
  });
  const r = (x: number) => Math.round(x * 1e4) / 1e4;
  return {
    tunerMs: r(tunerMs),
    otherStepsMs: r(otherStepsMs),
    coldExtraMs: r(coldExtraMs),
    networkMs: r(tunerMs + otherStepsMs + coldExtraMs),
    tunedNowMs: r(tunedNowMs),
    retimedMs: r(tunedNowMs + otherStepsMs + coldExtraMs),
  };
}

/**
 * Compiles, runs, checks and times a network; see the module documentation.
 *
 * @example
 * ```ts ignore
 * import { measureEndToEnd } from "./end_to_end.ts";
 * import { builtinNetwork } from "./builtin.ts";
 * import { randomWeights } from "./weights.ts";
 * const net = builtinNetwork("resnet18", { size: 32 });
 * const r = await measureEndToEnd(net, randomWeights(net, 1), { repeat: 3, check: true });
 * if (!r.matchesReference) throw new Error();
 * ```
 */
export async function measureEndToEnd(
  net: Network,
  weights: Weights,
  o: EndToEndOptions = {},
): Promise<EndToEnd> {
  if (typeof net !== "object" || net === null || !Array.isArray(net.layers) || !net.input) {
    throw new TypeError(
      `net must be a network (builtinNetwork("resnet18")), got ${described(net)}`,
    );
  }
  if (!(weights instanceof Map)) {
    throw new TypeError(
      `weights must be a Map of weights (randomWeights(net, seed)), got ${described(weights)}`,
    );
  }
  checkObject(o, "measureEndToEnd options");
  const input = new Float32Array(sizeOf(net.input.shape));
  fillUniform(o.seed ?? 1, [input]);
  const t0 = performance.now();
  const ex = await createExecutor(net, weights, {
    traces: o.traces,
    cacheDir: o.cacheDir,
    block: o.block,
  });
  const compileSeconds = (performance.now() - t0) / 1000;
  try {
    const output = ex.run(input);
    const repeat = o.repeat ?? 5, warmup = o.warmup ?? 1;
    const l = ex.latency({ repeat, warmup });
    const out: EndToEnd = {
      latencyMs: l.medianMs,
      timesMs: l.timesMs,
      kernels: ex.kernelCount,
      tuned: ex.tracedCount,
      kernelCalls: ex.steps.length,
      compileSeconds,
    };
    // One profile serves both: the steps' times inside passes.
    const profile = o.profile || o.isolated ? ex.profile({ repeat, warmup }) : undefined;
    if (o.profile) out.profile = profile;
    if (o.isolated) {
      out.isolated = {
        hot: ex.isolated({ repeat, warmup }),
        inPass: profile!,
        cold: ex.isolated({ repeat, warmup, cold: true }),
      };
    }
    if (o.check) {
      const want = referenceRun(net, weights, input);
      let err = 0, scale = 0;
      want.forEach((w, i) => {
        err = Math.max(err, Math.abs(output[i] - w));
        scale = Math.max(scale, Math.abs(w));
      });
      out.maxRelativeError = err / scale;
      out.matchesReference = err <= 1e-4 * scale;
    }
    return out;
  } finally {
    ex.close();
  }
}
