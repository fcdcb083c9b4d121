/**
 * The runner: measures built kernels in a pool of long-lived worker processes
 * (see `worker.ts`), one request at a time per worker, so a crash or a hang
 * only costs a fresh worker.
 *
 * @module
 */

import { describeStatus, type RequestLimits, WorkerProcess } from "./worker_process.ts";
import type { MeasureInput, RunResult, TimingOptions } from "./types.ts";

/** Default timing: 1 call per repeat, 3 repeats, no minimum repeat time, 1 warmup call. */
export const DEFAULT_TIMING: Readonly<TimingOptions> = {
  number: 1,
  repeat: 3,
  minRepeatMs: 0,
  warmup: 1,
};

/** Options of {@link createRunner}. */
export interface RunnerOptions {
  /** How to time each kernel. Default {@link DEFAULT_TIMING}; missing fields take the defaults. */
  timing?: Partial<TimingOptions>;
  /**
   * Wall seconds the candidate part of a request (check + timing) may take,
   * counted from the worker reporting the reference output ready. Default 10.
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

  constructor(readonly startSeconds: number, readonly ompThreads: number) {}

  async measure(
    input: MeasureInput,
    timing: TimingOptions,
    limits: RequestLimits,
  ): Promise<RunResult> {
    if (!this.worker || this.worker.exited) {
      await this.worker?.kill();
      this.worker = undefined;
      const fresh = await WorkerProcess.start(this.startSeconds, {
        OMP_NUM_THREADS: String(this.ompThreads),
      });
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
      const { errorKind, error, times } = outcome.reply;
      return error === undefined
        ? { errorKind, times, runSeconds }
        : { errorKind, error, times, runSeconds };
    }
    this.worker = undefined;
    await worker.kill();
    const inReference = outcome.phase === "reference";
    if (outcome.kind === "timeout") {
      const error = inReference
        ? `reference kernel timed out (before the candidate ran): no reference output within ${limits.referenceTimeoutSeconds} s; worker killed`
        : `no result within ${limits.timeoutSeconds} s; worker killed`;
      return { errorKind: "run_timeout", error, times: [], runSeconds };
    }
    const stderr = outcome.stderr.trim();
    const prefix = inReference ? "reference kernel crashed (before the candidate ran): " : "";
    const error = `${prefix}worker ${describeStatus(outcome.status)}${stderr ? `: ${stderr}` : ""}`;
    return { errorKind: "runtime_crash", error, times: [], runSeconds };
  }
}

/** Creates a {@link Runner}; see {@link RunnerOptions} for the defaults. */
export function createRunner(options: RunnerOptions = {}): Runner {
  const timing: TimingOptions = { ...DEFAULT_TIMING, ...options.timing };
  const limits: RequestLimits = {
    timeoutSeconds: options.timeoutSeconds ?? 10,
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
  const slots = Array.from({ length: workers }, () => new Slot(startSeconds, ompThreads));
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
          result = await slot.measure(input, timing, limits);
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
