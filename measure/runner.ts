/**
 * The runner: measures built kernels in a pool of long-lived worker processes
 * (see `cpu_worker.ts`), one request at a time per worker, so a crash or a hang
 * only costs a fresh worker. Workers run contained (`containment.ts`: memory,
 * CPU time, no new processes, death with the tuner).
 *
 * Transient failures (see `TRANSIENT_ERROR_KINDS` in `types.ts`) are
 * measured again at once, in a fresh worker, and the second result is the
 * one returned:
 * - `worker_lost`: the worker died of a signal a kernel does not raise
 *   ({@link OUTSIDE_SIGNALS}: SIGKILL from another process or the
 *   out-of-memory killer, SIGTERM, SIGINT, SIGHUP).
 * - `run_timeout_transient`: a time limit passed while the machine was loaded.
 *   Loaded and slow are told apart by the CPU time the worker got (read from
 *   `/proc/PID/stat`): a kernel that computes or spins uses a core-second per
 *   wall second it is given. A phase past its limit whose worker used less
 *   than `LOADED_CPU_SHARE` (half) of the limit in CPU time was starved: it
 *   goes on until it has (then it is a plain `run_timeout`, whatever the
 *   load), or until `LOADED_WALL_FACTOR` (4) times the limit, which makes it
 *   transient. A kernel that blocks without computing thus ends transient
 *   too, after 4 times the limit: it is measured again, and once more on each
 *   `--resume`.
 *
 * @module
 */

import {
  describeStatus,
  LOADED_CPU_SHARE,
  type RequestLimits,
  WorkerProcess,
} from "./cpu_worker_process.ts";
import { DEFAULTS } from "../ir/defaults.ts";
import { checkInteger, checkKnown, checkNumber, checkObject } from "../ir/check.ts";
import type { WorkerLimits } from "./containment.ts";
import { isTransient, type MeasureInput, type RunResult, type TimingOptions } from "./types.ts";

/** Signals that kill a worker from outside: a kernel does not raise them. */
export const OUTSIDE_SIGNALS: readonly Deno.Signal[] = ["SIGKILL", "SIGTERM", "SIGINT", "SIGHUP"];

/** Address space a worker may map beyond its start when the machine's memory is unknown: 8 GiB. */
export const DEFAULT_MEMORY_BYTES = 8 * 2 ** 30;

/**
 * Default timing, that of `tune`'s finalists (ir/defaults.ts
 * `DEFAULTS.tune.finalistTiming`): 1 call per repeat, 3 repeats of at least
 * 40 ms each (calls grow until a repeat lasts that), 1 warmup call.
 */
export const DEFAULT_TIMING: Readonly<TimingOptions> = DEFAULTS.tune.finalistTiming;

/** Options of {@link createRunner}. */
export interface RunnerOptions {
  /** How to time each kernel. Default {@link DEFAULT_TIMING}; missing fields take the defaults. */
  timing?: Partial<TimingOptions>;
  /**
   * Wall seconds the candidate part of a request (check + timing) may take,
   * counted from the worker reporting the reference output ready. Default
   * `DEFAULTS.tune.timeoutSeconds` (10), `tune --timeout`'s.
   */
  timeoutSeconds?: number;
  /**
   * Wall seconds the worker may take to have the reference output ready
   * (loading the reference and running it, unless cached in that worker).
   * The naive reference of a big workload can take many seconds. Default 600.
   */
  referenceTimeoutSeconds?: number;
  /** Worker processes measuring in parallel. Default 1 (kernels never overlap). */
  workers?: number;
  /** Wall seconds a fresh worker may take to start. Default 60. */
  startSeconds?: number;
  /**
   * OpenMP threads per worker (`OMP_NUM_THREADS` of the worker process).
   * Default: `OMP_NUM_THREADS` of this process when set, otherwise
   * {@link defaultOmpThreads} (the usable cores shared among the workers),
   * so that parallel workers never oversubscribe the cores. libgomp alone
   * counts every CPU of the affinity mask, which in a container with a CPU
   * quota can be many more than the cores it may use.
   */
  ompThreads?: number;
  /**
   * Bytes of address space a worker may map beyond what it maps at start
   * (`RLIMIT_AS`): a kernel's larger allocation fails. Default
   * {@link defaultMemoryBytes}: half the machine's memory shared among the
   * workers, at least 1 GiB.
   */
  memoryBytes?: number;
  /**
   * CPU seconds (all threads together) one request may use (`RLIMIT_CPU`,
   * reset per request; past it the kernel gets SIGXCPU: `run_timeout`).
   * Default: both time limits times the OpenMP threads, plus 60.
   */
  cpuSecondsPerRequest?: number;
}

/**
 * The default of {@link RunnerOptions.memoryBytes}: half the machine's memory
 * (`Deno.systemMemoryInfo`) shared among `workers` workers, at least 1 GiB;
 * {@link DEFAULT_MEMORY_BYTES} when the memory cannot be read.
 *
 * @example
 * ```ts
 * import { defaultMemoryBytes } from "./runner.ts";
 * console.log(`${defaultMemoryBytes(2) / 2 ** 30} GiB per worker`);
 * ```
 */
export function defaultMemoryBytes(workers = 1): number {
  try {
    // Never prompt for a permission: without it, the fallback.
    if (Deno.permissions.querySync({ name: "sys", kind: "systemMemoryInfo" }).state !== "granted") {
      return DEFAULT_MEMORY_BYTES;
    }
    const half = Deno.systemMemoryInfo().total / 2 / Math.max(1, workers);
    return Math.max(2 ** 30, Math.floor(half));
  } catch {
    return DEFAULT_MEMORY_BYTES;
  }
}

/**
 * OpenMP threads each of `workers` measurement workers gets: the usable cores
 * (`navigator.hardwareConcurrency`, which honours cgroup CPU quotas) divided
 * among the workers, at least 1.
 */
export function defaultOmpThreads(workers: number): number {
  return Math.max(1, Math.floor(navigator.hardwareConcurrency / Math.max(1, workers)));
}

/** Measures built kernels. */
export interface Runner {
  /**
   * Measures every input (results in input order); `onResult` is called as
   * each one finishes. A crashing, hanging or wrong kernel is a result, not
   * an exception. Throws only when a worker process cannot be started.
   */
  run(
    inputs: MeasureInput[],
    onResult?: (index: number, r: RunResult) => void,
  ): Promise<RunResult[]>;
  /** Stops every worker process. The runner cannot be used afterwards. */
  close(): Promise<void>;
}

/** One worker slot of the pool; holds a live process or none. */
class Slot {
  worker?: WorkerProcess;
  closed = false;

  constructor(
    readonly startSeconds: number,
    readonly ompThreads: number,
    readonly workerLimits: WorkerLimits,
  ) {}

  /** Measures `input`, and once more at once when the failure is transient. */
  async measureTwiceIfTransient(
    input: MeasureInput,
    timing: TimingOptions,
    limits: RequestLimits,
  ): Promise<RunResult> {
    const first = await this.measure(input, timing, limits);
    if (!isTransient(first.errorKind)) return first;
    const second = await this.measure(input, timing, limits);
    const runSeconds = first.runSeconds + second.runSeconds;
    if (second.error === undefined) return { ...second, runSeconds };
    const note = `measured twice; first: ${first.errorKind}: ${first.error}`;
    return { ...second, error: `${second.error} (${note})`, runSeconds };
  }

  async measure(
    input: MeasureInput,
    timing: TimingOptions,
    limits: RequestLimits,
  ): Promise<RunResult> {
    if (!this.worker || this.worker.exited) {
      await this.worker?.kill();
      this.worker = undefined;
      const fresh = await WorkerProcess.start(
        this.startSeconds,
        { OMP_NUM_THREADS: String(this.ompThreads) },
        this.workerLimits,
      );
      if (this.closed) {
        await fresh.kill();
        throw new Error("runner is closed");
      }
      this.worker = fresh;
    }
    const worker = this.worker;
    const { artifact, symbol, reference, signature, seed, atol, rtol, cutoffSeconds } = input;
    const start = performance.now();
    const outcome = await worker.request(
      {
        artifact,
        ...(symbol ? { symbol } : {}),
        reference,
        signature,
        seed,
        atol,
        rtol,
        timing,
        ...(cutoffSeconds !== undefined ? { cutoffSeconds } : {}),
      },
      limits,
    );
    const runSeconds = (performance.now() - start) / 1000;
    if (outcome.kind === "reply") {
      const { errorKind, error, times, verifySeconds, probeGBps } = outcome.reply;
      return {
        errorKind,
        ...(error !== undefined ? { error } : {}),
        times,
        runSeconds,
        ...(typeof verifySeconds === "number" ? { verifySeconds } : {}),
        ...(typeof probeGBps === "number" && probeGBps > 0 ? { probeGBps } : {}),
      };
    }
    this.worker = undefined;
    await worker.kill();
    const inReference = outcome.phase === "reference";
    if (outcome.kind === "timeout") {
      const { cpuSeconds, wallSeconds } = outcome;
      const limit = inReference ? limits.referenceTimeoutSeconds : limits.timeoutSeconds;
      const loaded = cpuSeconds !== undefined && cpuSeconds < LOADED_CPU_SHARE * limit;
      const base = inReference
        ? `reference kernel timed out (before the candidate ran): no reference output within ${limits.referenceTimeoutSeconds} s`
        : `no result within ${limits.timeoutSeconds} s`;
      const cpu = cpuSeconds === undefined
        ? ""
        : `; the worker ran ${cpuSeconds.toFixed(2)} s on a CPU in ${wallSeconds.toFixed(2)} s${
          loaded ? " (machine loaded)" : ""
        }`;
      const error = `${base}${cpu}; worker killed`;
      return {
        errorKind: loaded ? "run_timeout_transient" : "run_timeout",
        error,
        times: [],
        runSeconds,
      };
    }
    const stderr = outcome.stderr.trim();
    const prefix = inReference ? "reference kernel crashed (before the candidate ran): " : "";
    const signal = outcome.status.signal;
    const error = `${prefix}worker ${describeStatus(outcome.status)}${stderr ? `: ${stderr}` : ""}`;
    if (signal && OUTSIDE_SIGNALS.includes(signal)) {
      const why = `${error} (from outside the kernel: another process or the out-of-memory killer)`;
      return { errorKind: "worker_lost", error: why, times: [], runSeconds };
    }
    if (signal === "SIGXCPU") {
      const why =
        `${error} (CPU time limit of ${this.workerLimits.cpuSecondsPerRequest} s reached)`;
      return { errorKind: "run_timeout", error: why, times: [], runSeconds };
    }
    return { errorKind: "runtime_crash", error, times: [], runSeconds };
  }
}

/** The options {@link createRunner} knows (any other is a misspelling). */
const RUNNER_OPTIONS: readonly string[] = [
  "timing",
  "timeoutSeconds",
  "referenceTimeoutSeconds",
  "workers",
  "startSeconds",
  "ompThreads",
  "memoryBytes",
  "cpuSecondsPerRequest",
];

/** Creates a {@link Runner}; see {@link RunnerOptions} for the defaults. */
export function createRunner(options: RunnerOptions = {}): Runner {
  checkObject(options, "runner options");
  checkKnown(options as Record<string, unknown>, RUNNER_OPTIONS, "runner options");
  checkNumber(options.timeoutSeconds, "timeoutSeconds", { min: 0, above: true, optional: true });
  checkNumber(options.referenceTimeoutSeconds, "referenceTimeoutSeconds", {
    min: 0,
    above: true,
    optional: true,
  });
  checkNumber(options.startSeconds, "startSeconds", { min: 0, above: true, optional: true });
  checkInteger(options.workers, "workers", { min: 1, optional: true });
  if (options.timing !== undefined) {
    const t = checkObject(options.timing, "timing");
    checkKnown(t, ["number", "repeat", "minRepeatMs", "warmup", "noisySpread"], "timing");
    checkInteger(t.number, "timing.number", { min: 1, optional: true });
    checkInteger(t.repeat, "timing.repeat", { min: 1, optional: true });
    checkNumber(t.minRepeatMs, "timing.minRepeatMs", { min: 0, optional: true });
    checkInteger(t.warmup, "timing.warmup", { min: 0, optional: true });
    checkNumber(t.noisySpread, "timing.noisySpread", { min: 1, optional: true });
  }
  const timing: TimingOptions = { ...DEFAULT_TIMING, ...options.timing };
  const limits: RequestLimits = {
    timeoutSeconds: options.timeoutSeconds ?? DEFAULTS.tune.timeoutSeconds,
    referenceTimeoutSeconds: options.referenceTimeoutSeconds ?? 600,
  };
  const startSeconds = options.startSeconds ?? 60;
  const workers = Math.max(1, Math.floor(options.workers ?? 1));
  const fromEnv = Number(Deno.env.get("OMP_NUM_THREADS"));
  const ompThreads = Math.max(
    1,
    Math.floor(
      options.ompThreads ??
        (Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : defaultOmpThreads(workers)),
    ),
  );
  const workerLimits: WorkerLimits = {
    memoryBytes: options.memoryBytes ?? defaultMemoryBytes(workers),
    cpuSecondsPerRequest: options.cpuSecondsPerRequest ??
      (limits.timeoutSeconds + limits.referenceTimeoutSeconds) * ompThreads + 60,
    noFork: true,
  };
  const slots = Array.from(
    { length: workers },
    () => new Slot(startSeconds, ompThreads, workerLimits),
  );
  const idle = [...slots];
  const waiting: ((slot: Slot) => void)[] = [];
  let closed = false;

  const acquire = (): Promise<Slot> => {
    const slot = idle.shift();
    return slot ? Promise.resolve(slot) : new Promise((resolve) => waiting.push(resolve));
  };
  const release = (slot: Slot) => {
    const next = waiting.shift();
    if (next) next(slot);
    else idle.push(slot);
  };

  return {
    async run(inputs, onResult) {
      if (closed) throw new Error("runner is closed");
      return await Promise.all(inputs.map(async (input, index) => {
        const slot = await acquire();
        let result: RunResult;
        try {
          if (closed) throw new Error("runner is closed");
          result = await slot.measureTwiceIfTransient(input, timing, limits);
        } finally {
          release(slot);
        }
        onResult?.(index, result);
        return result;
      }));
    },
    async close() {
      closed = true;
      await Promise.all(slots.map(async (slot) => {
        slot.closed = true;
        const worker = slot.worker;
        slot.worker = undefined;
        await worker?.kill();
      }));
    },
  };
}
