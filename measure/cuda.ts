/**
 * CUDA as a {@link Measurer}: the CUDA source of a trace (replayed, checked
 * by the GPU postprocessor {@link verifyGpu}, lowered, printed by
 * {@link generateCuda}, followed by the timing harness of
 * `cuda_harness.ts`), the nvcc builder (reporting each candidate's ptxas
 * resources) and the CUDA runner (which reports `no_device` for every
 * candidate, once probed, on a machine without a GPU; the resources of each
 * candidate are appended to its recorded message so the records keep them),
 * wired into the native measurer with the C reference of the workload.
 *
 * @example
 * ```ts
 * import { createBuilder } from "./builder.ts";
 * import { createCudaMeasurer } from "./cuda.ts";
 * import { matmul } from "../ir/workloads.ts";
 * const m = createCudaMeasurer({ workload: matmul(64, 64, 64), referenceBuilder: createBuilder() });
 * console.log(m.name); // "cuda"; measure() needs nvcc, and a GPU for times
 * await m.close();
 * ```
 * @module
 */
import { generateCuda } from "../ir/codegen_cuda.ts";
import { ScheduleError } from "../ir/errors.ts";
import { gemmTolerance } from "../ir/gemm_gpu.ts";
import { createPrng } from "../ir/prng.ts";
import { gpuLaunches, type GpuTarget, H100, verifyGpu } from "../ir/target_gpu.ts";
import { replayTrace, type Trace } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";
import { join } from "node:path";
import type { Builder } from "./builder.ts";
import { cudaHarness } from "./cuda_harness.ts";
import { type PriorResult, withPriorResults } from "./cuda_prior.ts";
import { createCudaRunner, type CudaDeviceStatus } from "./cuda_runner.ts";
import type { KernelSource } from "./kernel_source.ts";
import { createNativeMeasurer, type NativeMeasurer } from "./native.ts";
import {
  createNvccBuilder,
  formatResources,
  type KernelResources,
  type NvccBuildResult,
} from "./nvcc_builder.ts";
import type { Runner } from "./runner.ts";
import type { TimingOptions } from "./types.ts";

/**
 * CUDA source of a candidate (the program and its timing harness), or why it
 * cannot be a GPU kernel (a ScheduleError's message).
 */
export function cudaKernelSource(trace: Trace, target: Readonly<GpuTarget> = H100): KernelSource {
  try {
    const { kernel } = verifyGpu(replayTrace(trace, { prng: createPrng(0) }), target);
    // The launcher's dynamic shared memory, where the target's launches carry it.
    const launches = gpuLaunches(kernel, "tb") as { name: string; dynamicSharedBytes?: number }[];
    const tolerance = gemmTolerance(kernel);
    return {
      source: generateCuda(kernel) + cudaHarness({ ...kernel, launches }),
      ...(tolerance ? { tolerance } : {}),
    };
  } catch (e) {
    if (e instanceof ScheduleError) return { error: e.message };
    throw e;
  }
}

/** Options of {@link cudaMeasurement}. */
export interface CudaMeasurementOptions {
  /** nvcc's cache; reference outputs go to `reference/` inside it. Default `.cache/cuda`. */
  cacheDir?: string;
  timeoutSeconds?: number;
  /** `number`, `repeat` and `minRepeatMs` as on the CPU (`warmup` is the checked launch). */
  timing?: Partial<TimingOptions>;
  /** Overwrite the L2 cache before each repeat. Default false. */
  flushL2?: boolean;
  /** Called with one line per built candidate (its ptxas resources or its error). */
  onBuilt?: (line: string) => void;
  /**
   * Results of the run recorded before it was resumed, by SHA-256 of their
   * CUDA source (`priorCudaResults`): a program among them is not run again.
   */
  prior?: ReadonlyMap<string, PriorResult>;
}

/** The nvcc builder and CUDA runner of a session, wired to report resources. */
export function cudaMeasurement(o: CudaMeasurementOptions = {}): {
  builder: ReturnType<typeof createNvccBuilder>;
  runner: Runner & { device(): Promise<CudaDeviceStatus | undefined> };
} {
  const resources = new Map<string, KernelResources[]>();
  let built = 0;
  const builder = createNvccBuilder({
    cacheDir: o.cacheDir,
    onBuilt: (_i: number, r: NvccBuildResult) => {
      built++;
      if (r.artifact) resources.set(r.artifact, r.resources);
      const what = r.errorKind === "none"
        ? `${formatResources(r.resources)}${
          r.cached ? " (cached)" : ` (${r.buildSeconds.toFixed(1)} s)`
        }`
        : `${r.errorKind}: ${(r.error ?? "").split("\n")[0]}`;
      o.onBuilt?.(`nvcc #${built}: ${what}`);
    },
  });
  const inner = createCudaRunner({
    timeoutSeconds: o.timeoutSeconds,
    number: o.timing?.number,
    repeat: o.timing?.repeat,
    minRepeatMs: o.timing?.minRepeatMs,
    flushL2: o.flushL2,
    referenceDir: join(o.cacheDir ?? join(Deno.cwd(), ".cache", "cuda"), "reference"),
  });
  const runner = {
    async run(...[inputs, onResult]: Parameters<Runner["run"]>) {
      const note = (artifact: string) => {
        const rs = resources.get(artifact);
        return rs ? `; ptxas: ${formatResources(rs)}` : "";
      };
      return await inner.run(inputs, (i, r) => {
        if (r.errorKind === "no_device") r.error = `${r.error}${note(inputs[i].artifact)}`;
        onResult?.(i, r);
      });
    },
    close: () => inner.close(),
    device: () => inner.device(),
  };
  return withPriorResults(builder, runner, o.prior ?? new Map());
}

/** Options of {@link createCudaMeasurer}. */
export interface CudaMeasurerOptions extends CudaMeasurementOptions {
  /** The workload every candidate schedules. */
  workload: Workload;
  /** Builds the C reference kernel the CUDA candidates are checked against (gcc). */
  referenceBuilder: Builder;
  /** Turns a trace into CUDA (tests inject kernels here). Default {@link cudaKernelSource}. */
  source?: (trace: Trace) => KernelSource;
  /** Seed of the random inputs. Default 0. */
  inputSeed?: number;
}

/** A CUDA measurer, which also says whether a device answered. */
export interface CudaMeasurer extends NativeMeasurer {
  /** The device probe's answer once a kernel was run (undefined before). */
  device(): Promise<CudaDeviceStatus | undefined>;
  /** The nvcc builder's description (for the records of a run). */
  describe(): Promise<string>;
}

/** Creates the CUDA measurer; see the module documentation. */
export function createCudaMeasurer(o: CudaMeasurerOptions): CudaMeasurer {
  const { builder, runner } = cudaMeasurement(o);
  const native = createNativeMeasurer({
    workload: o.workload,
    builder,
    runner,
    referenceBuilder: o.referenceBuilder,
    source: o.source ?? ((t) => cudaKernelSource(t)),
    ...(o.inputSeed !== undefined ? { inputSeed: o.inputSeed } : {}),
    name: "cuda",
  });
  return Object.assign(native, {
    device: () => runner.device(),
    describe: () => builder.describe(),
  });
}
