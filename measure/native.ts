/**
 * The native {@link Measurer}: a trace becomes C (or, given another source
 * and builder, CUDA), the builder compiles the batch in parallel, and the
 * runner checks each kernel against the workload's reference kernel and
 * times it in its worker processes, one at a time.
 *
 * Calls may overlap: a second `measure` builds its batch once the first is
 * being measured, and is measured only once the first is done (builds and
 * runs of the calls each go in call order, never two at once), so a tuning loop can
 * pipeline rounds (`overlap` in `tuner/loop.ts`) without perturbing timings
 * more than its builder's priority allows.
 *
 * A faulty candidate is a result: a trace that cannot be instantiated
 * (`instantiation_error`), a compile error, a crash, a hang or a wrong
 * output, each under its own error kind. Only a failure of the machinery (a
 * missing compiler, a reference kernel that does not build, a worker that
 * cannot start) throws.
 *
 * @example
 * ```ts
 * import { createNativeMeasurer } from "./native.ts";
 * import { createBuilder } from "./builder.ts";
 * import { createRunner } from "./runner.ts";
 * import { matmul } from "../ir/workloads.ts";
 * import { Schedule } from "../ir/schedule.ts";
 * import { traceOf } from "../ir/trace.ts";
 * import { createPrng } from "../ir/prng.ts";
 * const workload = matmul(16, 16, 16);
 * const runner = createRunner();
 * const m = createNativeMeasurer({ workload, builder: createBuilder(), runner });
 * const trace = traceOf(new Schedule(workload, { prng: createPrng(0) }));
 * const [r] = await m.measure([{ trace }]);
 * await m.close();
 * if (r.errorKind !== "none" || r.times.length !== 3) throw new Error(r.error);
 * ```
 * @module
 */
import type { Candidate } from "../ir/candidate.ts";
import { checkObject, checkWorkload, described } from "../ir/check.ts";
import type { Trace } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";
import type { Builder } from "./builder.ts";
import { type KernelSource, kernelSource, referenceSource } from "./kernel_source.ts";
import { signatureOf, toleranceOf } from "./kernel_source.ts";
import type { MeasureBatchOptions, Measurer, MeasureResult } from "./measurer.ts";
import type { Runner } from "./runner.ts";
import type { BuildResult, MeasureInput } from "./types.ts";

/** Options of {@link createNativeMeasurer}. */
export interface NativeMeasurerOptions {
  /** The workload every candidate schedules (its reference kernel checks them). */
  workload: Workload;
  /** Compiles candidates (gcc's `createBuilder`, or nvcc's). */
  builder: Builder;
  /** Checks and times built kernels (the CPU worker pool, or the CUDA runner). */
  runner: Runner;
  /**
   * Builds the C reference kernel when `builder` builds another language
   * (CUDA candidates are checked against the C reference). Default `builder`.
   */
  referenceBuilder?: Builder;
  /** Turns a trace into source (tests inject faulty kernels here). Default {@link kernelSource}. */
  source?: (trace: Trace) => KernelSource;
  /** Seed of the random inputs (same for reference and candidates). Default 0. */
  inputSeed?: number;
  /** {@link Measurer.name}. Default `"native-cpu"`. */
  name?: string;
  /** Closes the runner on {@link Measurer.close}. Default true. */
  closeRunner?: boolean;
}

/** Wall seconds a {@link NativeMeasurer} spent in each part, summed over its calls. */
export interface NativeTimings {
  /** Replay, lowering and code generation of traces. */
  source: number;
  /** Waiting for the builder (each call's batch, start to finish). */
  build: number;
  /** Waiting for the runner (each call's batch, start to finish). */
  run: number;
}

/** A native measurer, which also says where its time went. */
export interface NativeMeasurer extends Measurer {
  /** Where the time of all calls so far went (builds of overlapping calls overlap runs). */
  readonly timings: Readonly<NativeTimings>;
  /** Closes the runner (unless `closeRunner` is false). */
  close(): Promise<void>;
}

/** Creates the native measurer; see the module documentation. */
export function createNativeMeasurer(o: NativeMeasurerOptions): NativeMeasurer {
  const x = checkObject(o, "native measurer options");
  checkWorkload(x.workload, "workload");
  for (const k of ["builder", "runner"]) {
    if (typeof x[k] !== "object" || x[k] === null) {
      throw new TypeError(
        `${k} must be a ${k} (create${k[0].toUpperCase()}${k.slice(1)}()), got ${described(x[k])}`,
      );
    }
  }
  const source = o.source ?? kernelSource;
  const signature = signatureOf(o.workload);
  const tolerance = toleranceOf(o.workload);
  const timings: NativeTimings = { source: 0, build: 0, run: 0 };
  let reference: Promise<string> | undefined;
  /** Settles when the last call's runs began: the next call's build waits on it. */
  let lastBuildSlot: Promise<void> = Promise.resolve();
  /** Settles when the runner part of the last call is over: the next call's runs wait on it. */
  let lastRun: Promise<void> = Promise.resolve();

  async function measure(
    batch: readonly Candidate[],
    options: MeasureBatchOptions = {},
  ): Promise<MeasureResult[]> {
    let release!: () => void, releaseSlot!: () => void;
    const previous = lastRun, previousSlot = lastBuildSlot;
    lastRun = new Promise<void>((r) => release = r);
    lastBuildSlot = new Promise<void>((r) => releaseSlot = r);
    try {
      const t0 = performance.now();
      const sources = batch.map((c) => {
        if (!c.trace) {
          throw new TypeError(
            `Measurer "${name}" measures schedules: a candidate has no trace (give knob strategies a template's candidateOf)`,
          );
        }
        return source(c.trace);
      });
      timings.source += (performance.now() - t0) / 1000;
      // Batches build one after another, each once the previous one is being run.
      await previousSlot;
      reference ??= buildReference(o.referenceBuilder ?? o.builder, o.workload);
      const ref = await reference;
      const toBuild = sources.flatMap((s, i) => "source" in s ? [{ i, source: s.source }] : []);
      const t1 = performance.now();
      const built = await o.builder.build(toBuild.map(({ source }) => ({ source })));
      timings.build += (performance.now() - t1) / 1000;
      const buildOf = new Map<number, BuildResult>(toBuild.map(({ i }, j) => [i, built[j]]));
      // The runner measures one call's batch at a time, in call order.
      await previous;
      const results: MeasureResult[] = new Array(batch.length);
      const finish = (i: number, r: MeasureResult) => {
        results[i] = r;
        options.onResult?.(i, r);
      };
      const toRun: { i: number; input: MeasureInput }[] = [];
      sources.forEach((s, i) => {
        if ("error" in s) {
          return finish(i, {
            errorKind: "instantiation_error",
            error: s.error,
            times: [],
            buildSeconds: 0,
            runSeconds: 0,
          });
        }
        const b = buildOf.get(i)!;
        if (b.errorKind !== "none") {
          return finish(i, {
            errorKind: b.errorKind,
            ...(b.error !== undefined ? { error: b.error } : {}),
            times: [],
            buildSeconds: b.buildSeconds,
            runSeconds: 0,
          });
        }
        toRun.push({
          i,
          input: {
            artifact: b.artifact!,
            ...(b.symbol ? { symbol: b.symbol } : {}),
            reference: ref,
            signature,
            seed: o.inputSeed ?? 0,
            ...looser(tolerance, s.tolerance),
            ...(options.cutoffSeconds !== undefined
              ? { cutoffSeconds: options.cutoffSeconds }
              : {}),
          },
        });
      });
      const t2 = performance.now();
      try {
        const running = o.runner.run(toRun.map((t) => t.input), (j, r) => {
          const { i } = toRun[j];
          finish(i, {
            errorKind: r.errorKind,
            ...(r.error !== undefined ? { error: r.error } : {}),
            times: r.times,
            buildSeconds: buildOf.get(i)!.buildSeconds,
            runSeconds: r.runSeconds,
            ...(r.verifySeconds !== undefined ? { verifySeconds: r.verifySeconds } : {}),
            ...(r.probeGBps !== undefined ? { conditions: { probeGBps: r.probeGBps } } : {}),
          });
        });
        releaseSlot();
        await running;
      } finally {
        timings.run += (performance.now() - t2) / 1000;
      }
      return results;
    } finally {
      releaseSlot();
      // Never before the previous call's runs: a call that failed early must not let the next
      // one run beside them.
      previous.then(release, release);
    }
  }

  const name = o.name ?? "native-cpu";
  return {
    name,
    timings,
    measure,
    close: async () => {
      if (o.closeRunner ?? true) await o.runner.close();
    },
  };
}

/** Builds the reference kernel; a failure here is a bug, so it throws. */
async function buildReference(builder: Builder, w: Workload): Promise<string> {
  const [r] = await builder.build([{ source: referenceSource(w) }]);
  if (r.errorKind !== "none" || !r.artifact) {
    throw new Error(`The reference kernel of ${w.name} did not build: ${r.error}`);
  }
  return r.artifact;
}

/** The looser of two tolerances, elementwise (the second may be absent). */
function looser(
  a: { atol: number; rtol: number },
  b?: { atol: number; rtol: number },
): { atol: number; rtol: number } {
  return b ? { atol: Math.max(a.atol, b.atol), rtol: Math.max(a.rtol, b.rtol) } : a;
}
