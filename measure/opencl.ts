/**
 * The OpenCL twin of a GPU schedule as a {@link Measurer}: each candidate's
 * trace is replayed, checked against the GPU target's limits
 * ({@link verifyGpu}), emitted as OpenCL C, run on the first OpenCL platform
 * (PoCL on the CPU here) and its output compared with the reference
 * interpreter on seeded inputs (`checkGpuSchedules` of `opencl_runner.ts`).
 * It checks correctness and does not time: PoCL's time on the CPU says
 * nothing about a GPU, so a correct candidate is `"none"` with no times.
 *
 * Error kinds: a trace that cannot be replayed or breaks a limit of the
 * target is `instantiation_error`; an OpenCL program that does not build is
 * `compile_host` (so is one that crashes the compiler: it is built in a child
 * process first, see `OpenCLRuntime.build`); one that fails to run is `runtime_error`; a wrong output is
 * `wrong_answer`.
 *
 * @example
 * ```ts ignore
 * import { createOpenCLMeasurer } from "./opencl.ts";
 * const m = createOpenCLMeasurer();
 * const [r] = await m.measure([{ trace }]); // a GPU schedule's trace
 * console.log(r.errorKind); // "none" when its OpenCL twin matches the reference
 * await m.close();
 * ```
 * @module
 */
import type { Candidate } from "../ir/candidate.ts";
import type { ErrorKind } from "../ir/error_kind.ts";
import { createPrng } from "../ir/prng.ts";
import type { Schedule } from "../ir/schedule.ts";
import type { GpuTarget } from "../ir/target_gpu.ts";
import { replayTrace } from "../ir/trace.ts";
import type { MeasureBatchOptions, Measurer, MeasureResult } from "./measurer.ts";
import { checkGpuSchedules, type GpuCheckResult, OpenCLRuntime } from "./opencl_runner.ts";

/** Options of {@link createOpenCLMeasurer}. */
export interface OpenCLMeasurerOptions {
  /** The runtime to run on. Default: `OpenCLRuntime.open()` at the first call, closed by `close`. */
  runtime?: OpenCLRuntime;
  /** Seed of the random inputs. Default 0. */
  seed?: number;
  /** Target whose limits are checked. Default H100. */
  target?: Readonly<GpuTarget>;
}

/** An OpenCL measurer, whose `close` releases the runtime it opened. */
export interface OpenCLMeasurer extends Measurer {
  close(): Promise<void>;
}

/** Creates the OpenCL measurer; see the module documentation. */
export function createOpenCLMeasurer(o: OpenCLMeasurerOptions = {}): OpenCLMeasurer {
  let rt = o.runtime;
  const opened = !o.runtime;
  const check = (schedules: Schedule[]): GpuCheckResult[] =>
    checkGpuSchedules(rt!, schedules, {
      ...(o.seed !== undefined ? { seed: o.seed } : {}),
      ...(o.target ? { target: o.target } : {}),
    });
  return {
    name: "opencl",
    measure(batch: readonly Candidate[], options: MeasureBatchOptions = {}) {
      try {
        rt ??= OpenCLRuntime.open();
        const results: MeasureResult[] = new Array(batch.length);
        const schedules: { i: number; sch: Schedule }[] = [];
        batch.forEach((c, i) => {
          if (!c.trace) {
            throw new TypeError(`Measurer "opencl" checks schedules: a candidate has no trace`);
          }
          try {
            schedules.push({ i, sch: replayTrace(c.trace, { prng: createPrng(0) }) });
          } catch (e) {
            results[i] = failure("instantiation_error", (e as Error).message, 0);
          }
        });
        const t0 = performance.now();
        // A program that does not build is a "build" failure of its own (checkGpuSchedules).
        const checked = check(schedules.map((s) => s.sch));
        const seconds = (performance.now() - t0) / 1000 / Math.max(1, schedules.length);
        schedules.forEach(({ i }, j) => {
          const c = checked[j];
          results[i] = resultOf(c, seconds);
        });
        results.forEach((r, i) => options.onResult?.(i, r));
        return Promise.resolve(results);
      } catch (e) {
        return Promise.reject(e);
      }
    },
    close: () => {
      if (opened) rt?.close();
      rt = undefined;
      return Promise.resolve();
    },
  };
}

function failure(errorKind: ErrorKind, error: string, runSeconds: number): MeasureResult {
  return { errorKind, error, times: [], buildSeconds: 0, runSeconds };
}

/** A check's result: correct, rejected before running, failed to run, or wrong. */
function resultOf(c: GpuCheckResult, seconds: number): MeasureResult {
  if (c.ok) return { errorKind: "none", times: [], buildSeconds: 0, runSeconds: seconds };
  if (c.failure === "rejected") return failure("instantiation_error", c.message, 0);
  if (c.failure === "build") return failure("compile_host", c.message, 0);
  return failure(c.failure === "wrong" ? "wrong_answer" : "runtime_error", c.message, seconds);
}
