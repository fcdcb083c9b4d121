/**
 * The JSON-lines protocol between the runner and a measurement worker.
 *
 * The worker first writes {@link WORKER_READY}, then answers each request
 * line with one reply line carrying the same `id`. Before the reply it writes
 * one progress line ({@link WorkerProgress}, phase
 * {@link PHASE_REFERENCE_READY}) once it has the reference output (computed or
 * cached) and is about to run the candidate, so the runner can give the
 * reference and the candidate separate time limits. A reader ignores lines it
 * does not know.
 *
 * @module
 */

import type { ErrorKind, KernelSignature, TimingOptions } from "./types.ts";

/** The line a worker writes once it is ready for requests. */
export const WORKER_READY = '{"ready":true}';

/** Phase of the progress line sent once the reference output is ready. */
export const PHASE_REFERENCE_READY = "reference-ready";

/** An intermediate line about one request (one line of worker stdout). */
export interface WorkerProgress {
  /** The request's id. */
  id: number;
  /** What the worker has reached; {@link PHASE_REFERENCE_READY} is the only one sent now. */
  phase: string;
}

/** The progress line for request `id` saying its reference output is ready. */
export function referenceReadyLine(id: number): string {
  const progress: WorkerProgress = { id, phase: PHASE_REFERENCE_READY };
  return JSON.stringify(progress);
}

/** One measurement request (one line of worker stdin). */
export interface WorkerRequest {
  /** Echoed in the reply. */
  id: number;
  /** Shared object of the candidate. */
  artifact: string;
  /** The candidate's kernel symbol (`tb_kernel_<hash>` in a batch); default `tb_kernel`. */
  symbol?: string;
  /** Shared object of the reference kernel. */
  reference: string;
  signature: KernelSignature;
  seed: number;
  atol: number;
  rtol: number;
  timing: TimingOptions;
  /** No repeat after the first when it is slower than this (seconds per call). */
  cutoffSeconds?: number;
}

/** One reply (one line of worker stdout); the last line about a request. */
export interface WorkerReply {
  /** The request's id, or null when the request line could not be read. */
  id: number | null;
  errorKind: ErrorKind;
  error?: string;
  /** Seconds per call, one per repeat; empty on failure. */
  times: number[];
  /** Wall seconds the worker spent on the request. */
  runSeconds: number;
  /** Of `runSeconds`, the seconds of the output check (the candidate's kernel run once and compared). */
  verifySeconds?: number;
  /**
   * The harness's speed probe (GB/s of the slowest thread's sweep), the
   * slower of its runs just before and just after the repeats; absent when
   * the library has no probe or nothing was timed.
   */
  probeGBps?: number;
}

function fail(message: string): never {
  throw new Error(`bad request: ${message}`);
}

function finite(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) fail(`${name} must be a finite number`);
  return value;
}

function count(value: unknown, name: string, min: number): number {
  if (!Number.isInteger(value) || (value as number) < min) {
    fail(`${name} must be an integer >= ${min}`);
  }
  return value as number;
}

function checkSignature(value: unknown): KernelSignature {
  const buffers = (value as KernelSignature | null)?.buffers;
  if (!Array.isArray(buffers)) fail("signature.buffers must be an array");
  buffers.forEach((b, i) => {
    if (typeof b?.name !== "string") fail(`signature.buffers[${i}].name must be a string`);
    count(b.size, `signature.buffers[${i}].size`, 0);
    if (b.role !== "input" && b.role !== "output") {
      fail(`signature.buffers[${i}].role must be "input" or "output"`);
    }
  });
  if (!buffers.some((b) => b.role === "output")) fail("signature has no output buffer");
  return { buffers };
}

/** Checks a parsed request line, throwing an Error that says what is wrong. */
export function checkRequest(value: unknown): WorkerRequest {
  if (typeof value !== "object" || value === null) fail("not a JSON object");
  const r = value as Record<string, unknown>;
  const timing = (r.timing ?? {}) as Record<string, unknown>;
  if (typeof r.artifact !== "string") fail("artifact must be a string");
  if (typeof r.reference !== "string") fail("reference must be a string");
  if (
    r.symbol !== undefined && !(typeof r.symbol === "string" && /^tb_kernel\w*$/.test(r.symbol))
  ) {
    fail("symbol must be tb_kernel or tb_kernel_<suffix>");
  }
  if (
    r.cutoffSeconds !== undefined &&
    !(typeof r.cutoffSeconds === "number" && Number.isFinite(r.cutoffSeconds) &&
      r.cutoffSeconds > 0)
  ) {
    fail("cutoffSeconds must be a positive number");
  }
  return {
    id: finite(r.id, "id"),
    artifact: r.artifact,
    ...(r.symbol !== undefined ? { symbol: r.symbol as string } : {}),
    reference: r.reference,
    signature: checkSignature(r.signature),
    seed: finite(r.seed, "seed"),
    atol: finite(r.atol, "atol"),
    rtol: finite(r.rtol, "rtol"),
    timing: {
      number: count(timing.number, "timing.number", 1),
      repeat: count(timing.repeat, "timing.repeat", 1),
      minRepeatMs: finite(timing.minRepeatMs, "timing.minRepeatMs"),
      warmup: count(timing.warmup, "timing.warmup", 0),
      ...(timing.noisySpread !== undefined
        ? { noisySpread: finite(timing.noisySpread, "timing.noisySpread") }
        : {}),
    },
    ...(r.cutoffSeconds !== undefined ? { cutoffSeconds: r.cutoffSeconds as number } : {}),
  };
}
