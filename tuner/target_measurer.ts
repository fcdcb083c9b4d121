/**
 * The measurer of a target ({@link Target} of `ir/target.ts`), the one place
 * that picks it: `cpu` builds C with the builder and times it in the runner's
 * worker processes (`measure/native.ts`), `cuda` builds with nvcc and times
 * on the GPU (`measure/cuda.ts`, the C builder making only the reference),
 * `replay` looks candidates up in a recorded space (`measure/replay.ts`).
 * It lives in `tuner/`, above `measure/`, as the target module in `ir/`
 * may not import measurers.
 *
 * @example
 * ```ts
 * import { resolveTarget } from "../ir/target.ts";
 * import { targetMeasurer } from "./target_measurer.ts";
 * const local = targetMeasurer(resolveTarget("replay"), {
 *   replay: { name: "toy", evaluate: () => ({ errorKind: "none", seconds: 1e-3 }) },
 * });
 * const [r] = await local.measurer.measure([{ knobs: [0] }]);
 * if (r.times[0] !== 1e-3 || await local.describe() !== "none (replay of toy)") throw new Error();
 * ```
 * @module
 */
import type { Target } from "../ir/target.ts";
import type { Trace } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";
import type { Builder } from "../measure/builder.ts";
import {
  createCudaMeasurer,
  cudaKernelSource,
  type CudaMeasurementOptions,
} from "../measure/cuda.ts";
import type { CudaDeviceStatus } from "../measure/cuda_runner.ts";
import { type KernelSource, kernelSource } from "../measure/kernel_source.ts";
import type { Measurer } from "../measure/measurer.ts";
import { createNativeMeasurer } from "../measure/native.ts";
import { type RecordedSpace, replayMeasurer } from "../measure/replay.ts";
import { createRunner } from "../measure/runner.ts";
import type { TimingOptions } from "../measure/types.ts";

/** Options of {@link targetMeasurer}. */
export interface TargetMeasurerOptions {
  /** The workload every candidate schedules (`cpu`, `cuda`). */
  workload?: Workload;
  /** The recorded space answered from (`replay`). */
  replay?: RecordedSpace;
  /** The C builder: the kernels of `cpu`, the reference of `cuda`. */
  builder?: Builder;
  /** Turns a trace into source. Default the target's (`kernelSource`, `cudaKernelSource`). */
  source?: (trace: Trace) => KernelSource;
  /** Runner timing (`number`, `repeat`, `minRepeatMs`, ...). */
  timing?: TimingOptions;
  /** Seconds one candidate may run. */
  timeoutSeconds?: number;
  /** `cuda` only: nvcc's cache, the L2 flush, build lines and prior results. */
  cuda?: Pick<CudaMeasurementOptions, "cacheDir" | "flushL2" | "onBuilt" | "prior">;
}

/** A target's measurer with what a run records of it. */
export interface TargetMeasurer {
  measurer: Measurer;
  /** The compiler (or the replay) that makes the run's results, for its records. */
  describe(): Promise<string>;
  /** `cuda`: the device probe's answer once a kernel ran (undefined before). */
  device?(): Promise<CudaDeviceStatus | undefined>;
}

/** The source a target builds from a trace: CUDA for nvcc, else C. */
export function targetSource(target: Target): (trace: Trace) => KernelSource {
  return target.nvcc ? (t) => cudaKernelSource(t, target.limits) : kernelSource;
}

/**
 * The measurer of a target.
 *
 * @throws {TypeError} naming the option a target needs and did not get (`replay`, `workload`, `builder`)
 */
export function targetMeasurer(target: Target, o: TargetMeasurerOptions): TargetMeasurer {
  if (target.replay) {
    const space = o.replay;
    if (!space) throw new TypeError(`replay: target ${target.kind} needs the recorded space`);
    return {
      measurer: replayMeasurer(space),
      describe: () => Promise.resolve(`none (replay of ${space.name})`),
    };
  }
  if (!o.workload) throw new TypeError(`workload: target ${target.kind} needs the workload`);
  if (!o.builder) throw new TypeError(`builder: target ${target.kind} needs a C builder`);
  const source = o.source ?? targetSource(target);
  if (target.nvcc) {
    const cuda = createCudaMeasurer({
      workload: o.workload,
      referenceBuilder: o.builder,
      source,
      ...(o.timeoutSeconds !== undefined ? { timeoutSeconds: o.timeoutSeconds } : {}),
      ...(o.timing ? { timing: o.timing } : {}),
      ...o.cuda,
    });
    return { measurer: cuda, describe: () => cuda.describe(), device: () => cuda.device() };
  }
  if (!target.host) {
    throw new RangeError(`target: ${target.kind} kernels are checked on PoCL, not tuned`);
  }
  const builder = o.builder;
  return {
    measurer: createNativeMeasurer({
      workload: o.workload,
      builder,
      runner: createRunner({ timing: o.timing, timeoutSeconds: o.timeoutSeconds }),
      source,
    }),
    describe: () => builder.describe(),
  };
}
