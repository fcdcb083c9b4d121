/**
 * What travels through the queue: a job is a trace to measure with the
 * timing options of the run, and the tunebook version that made it; its
 * result is a {@link MeasureResult} (every repeat and the error kind). A job
 * never carries a command, a path or code: the worker generates the kernel
 * from the trace itself, so a queue cannot make a worker run anything else.
 *
 * @example
 * ```ts
 * import { parseJob } from "./job.ts";
 * const job = parseJob({
 *   version: "0.1.0",
 *   trace: { version: 1, workload: { name: "matmul", shape: [8, 8, 8] }, insts: [] },
 *   options: { timing: { number: 1, repeat: 3, minRepeatMs: 0, warmup: 1 }, timeoutSeconds: 10, inputSeed: 0 },
 * });
 * if (job.trace.workload.name !== "matmul") throw new Error();
 * ```
 * @module
 */
import { parseTrace, type Trace } from "../ir/trace.ts";
import type { TimingOptions } from "../measure/types.ts";
import type { MeasureResult } from "../measure/measurer.ts";
import { ERROR_KINDS } from "../ir/error_kind.ts";

/** How every job of a run is measured (the run's stored configuration). */
export interface JobOptions {
  timing: TimingOptions;
  /** Wall seconds the candidate's run may take on the worker (running time, never queue time). */
  timeoutSeconds: number;
  /** Seed of the measurement inputs. */
  inputSeed: number;
  /** Racing: no further repeats once the first is slower than this (seconds per call). */
  cutoffSeconds?: number;
}

/** One measurement job. */
export interface MeasureJob {
  /** tunebook version of the tuner that sent it; a worker of another version refuses it. */
  version: string;
  trace: Trace;
  options: JobOptions;
}

/** A job's data that is not a {@link MeasureJob}; names the field. */
export class JobError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "JobError";
  }
}

/** Checks a job's data field by field: a job holds exactly version, trace and options. */
export function parseJob(data: unknown): MeasureJob {
  const o = record(data, "job");
  only(o, ["version", "trace", "options"], "job");
  if (typeof o.version !== "string") throw new JobError("job field version is not a string");
  let trace: Trace;
  try {
    trace = parseTrace(o.trace);
  } catch (e) {
    throw new JobError(`job field trace: ${(e as Error).message}`);
  }
  const p = record(o.options, "options");
  only(p, ["timing", "timeoutSeconds", "inputSeed", "cutoffSeconds"], "options");
  const t = record(p.timing, "options.timing");
  only(t, ["number", "repeat", "minRepeatMs", "warmup", "noisySpread"], "options.timing");
  const num = (v: unknown, field: string, min: number): number => {
    if (typeof v !== "number" || !Number.isFinite(v) || v < min) {
      throw new JobError(`job field ${field} is not a number >= ${min}`);
    }
    return v;
  };
  return {
    version: o.version,
    trace,
    options: {
      timing: {
        number: num(t.number, "options.timing.number", 1),
        repeat: num(t.repeat, "options.timing.repeat", 1),
        minRepeatMs: num(t.minRepeatMs, "options.timing.minRepeatMs", 0),
        warmup: num(t.warmup, "options.timing.warmup", 0),
        ...(t.noisySpread !== undefined
          ? { noisySpread: num(t.noisySpread, "options.timing.noisySpread", 1) }
          : {}),
      },
      timeoutSeconds: num(p.timeoutSeconds, "options.timeoutSeconds", 0.001),
      inputSeed: num(p.inputSeed, "options.inputSeed", 0),
      ...(p.cutoffSeconds !== undefined
        ? { cutoffSeconds: num(p.cutoffSeconds, "options.cutoffSeconds", 0) }
        : {}),
    },
  };
}

/** Checks a job's return value (from a worker, through Redis) is a {@link MeasureResult}. */
export function parseResult(data: unknown): MeasureResult {
  const v = typeof data === "string" ? JSON.parse(data) : data;
  const o = record(v, "result");
  if (!ERROR_KINDS.includes(o.errorKind as never)) {
    throw new JobError(`result field errorKind is not an error kind: ${String(o.errorKind)}`);
  }
  if (!Array.isArray(o.times) || !o.times.every((t) => typeof t === "number")) {
    throw new JobError("result field times is not a list of numbers");
  }
  return {
    errorKind: o.errorKind as MeasureResult["errorKind"],
    ...(typeof o.error === "string" ? { error: o.error } : {}),
    times: o.times as number[],
    buildSeconds: Number(o.buildSeconds) || 0,
    runSeconds: Number(o.runSeconds) || 0,
  };
}

function record(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new JobError(`${what} is not an object`);
  }
  return v as Record<string, unknown>;
}

function only(o: Record<string, unknown>, keys: string[], what: string): void {
  for (const k of Object.keys(o)) {
    if (!keys.includes(k)) throw new JobError(`${what} has an unknown field ${k}`);
  }
}
