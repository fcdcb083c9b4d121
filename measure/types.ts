/**
 * Types shared by the builder, the runner and the records database.
 *
 * A candidate kernel is C source that defines
 * `void tb_kernel(float **bufs)`: `bufs` holds one pointer per tensor of the
 * workload, in the order of {@link KernelSignature.buffers}. Inputs come
 * first, outputs last.
 *
 * @module
 */

export {
  ERROR_KINDS,
  type ErrorKind,
  isTransient,
  TRANSIENT_ERROR_KINDS,
} from "../ir/error_kind.ts";
import type { ErrorKind } from "../ir/error_kind.ts";

/** One float32 tensor passed to `tb_kernel`. */
export interface BufferSpec {
  /** Tensor name (checked identifier, for messages only). */
  name: string;
  /** Number of float32 elements. */
  size: number;
  /** Inputs are filled with seeded random values; outputs are checked. */
  role: "input" | "output";
}

/** The buffers a kernel takes, in `bufs[]` order. */
export interface KernelSignature {
  /** Every buffer, inputs first, then outputs. */
  buffers: BufferSpec[];
}

/** A kernel to compile. */
export interface BuildInput {
  /** C source defining `void tb_kernel(float **bufs)`. */
  source: string;
}

/** What the builder produced for one {@link BuildInput}. */
export interface BuildResult {
  /** `"none"`, `"compile_host"`, `"build_timeout"` or `"build_timeout_transient"` (starved of CPU). */
  errorKind: ErrorKind;
  /** Path of the shared object when `errorKind` is `"none"`. */
  artifact?: string;
  /**
   * The kernel's symbol in `artifact` when it is not `tb_kernel` (a batch
   * holds `tb_kernel_<hash>`, timed by `tb_time_<hash>`).
   */
  symbol?: string;
  /** Compiler output when the build failed. */
  error?: string;
  /** Wall seconds spent compiling (0 when served from the cache). */
  buildSeconds: number;
  /** True when the shared object came from the content-hash cache. */
  cached: boolean;
  /** Content hash of source + compiler + flags. */
  hash: string;
}

/** How to time a kernel, as in TVM's time evaluator. */
export interface TimingOptions {
  /** Calls per repeat (grown until a repeat lasts `minRepeatMs`). Default 1. */
  number: number;
  /** Repeats; one time is kept per repeat. Default 3. */
  repeat: number;
  /** Minimum milliseconds per repeat. Default 0. */
  minRepeatMs: number;
  /** Untimed calls before the first repeat. Default 1. */
  warmup: number;
  /**
   * Repeats whose slowest is more than this factor of their fastest are
   * noisy: the candidate gets `repeat` repeats more, once, and keeps them all
   * (`times` has twice `repeat`). Default: none (never more repeats).
   */
  noisySpread?: number;
}

/** One measurement request for the runner. */
export interface MeasureInput {
  /** Shared object of the candidate. */
  artifact: string;
  /** The candidate's kernel symbol in `artifact` (its build's `symbol`). Default `tb_kernel`. */
  symbol?: string;
  /** Shared object of the reference kernel of the same workload. */
  reference: string;
  /** The buffers the kernel (and its reference) take. */
  signature: KernelSignature;
  /** Seed of the random inputs (same for reference and candidate). */
  seed: number;
  /** Tolerance of the output check: |out - ref| <= atol + rtol * |ref|. */
  atol: number;
  /** Relative tolerance of the output check (see `atol`). */
  rtol: number;
  /**
   * Racing: when the first repeat's seconds per call exceed this, the
   * candidate cannot compete and gets no further repeats (its result has one
   * time). Default: every repeat.
   */
  cutoffSeconds?: number;
}

/** What the runner measured for one {@link MeasureInput}. */
export interface RunResult {
  /** `"none"` when the kernel ran and its output matched the reference; else why not. */
  errorKind: ErrorKind;
  /** Message for a failure (signal, timeout, largest error). */
  error?: string;
  /** Seconds per call, one entry per repeat. Empty on failure. */
  times: number[];
  /** Wall seconds the measurement took in total. */
  runSeconds: number;
  /** Of `runSeconds`, the seconds of the output check, when it ran. */
  verifySeconds?: number;
  /** The harness's speed probe around the repeats (`MeasureConditions.probeGBps`), when it ran. */
  probeGBps?: number;
}
