/**
 * Why a measurement failed: the error kinds every layer shares (the runner
 * returns them, the records database stores them, strategies observe them).
 * @module
 */

/**
 * Why a candidate failed, named after AutoTVM's `MeasureErrorNo` where one
 * exists. `"none"` means the candidate was measured and its output checked.
 *
 * Three kinds are transient ({@link TRANSIENT_ERROR_KINDS}): caused outside
 * the kernel, they say nothing about the candidate, which is measured again.
 * `"worker_lost"`: the worker was killed by a signal a kernel does not raise
 * (SIGKILL, SIGTERM, SIGINT, SIGHUP: from another process, or the
 * out-of-memory killer). `"run_timeout_transient"`: the time limit passed
 * while the worker got less than half of a core (see `runner.ts`).
 * `"build_timeout_transient"`: the compiler's time limit passed while it got
 * less than half of a core (see `compile.ts`); a `"build_timeout"` had it.
 */
export type ErrorKind =
  | "none"
  | "instantiation_error"
  | "compile_host"
  | "build_timeout"
  | "runtime_crash"
  | "runtime_error"
  | "run_timeout"
  | "wrong_answer"
  | "no_device"
  | "unknown"
  | "worker_lost"
  | "run_timeout_transient"
  | "build_timeout_transient";

/** Every error kind, in a stable order (for tables and exports). */
export const ERROR_KINDS: readonly ErrorKind[] = [
  "none",
  "instantiation_error",
  "compile_host",
  "build_timeout",
  "runtime_crash",
  "runtime_error",
  "run_timeout",
  "wrong_answer",
  "no_device",
  "unknown",
  "worker_lost",
  "run_timeout_transient",
  "build_timeout_transient",
];

/**
 * Error kinds caused outside the kernel: the runner measures such a candidate
 * again at once, and the tuning loop again on `--resume`; a result of one of
 * these kinds is never final.
 */
export const TRANSIENT_ERROR_KINDS: readonly ErrorKind[] = [
  "worker_lost",
  "run_timeout_transient",
  "build_timeout_transient",
];

/**
 * True when `kind` is transient (see {@link TRANSIENT_ERROR_KINDS}).
 *
 * @example
 * ```ts
 * import { isTransient } from "./error_kind.ts";
 * console.log(isTransient("worker_lost"), isTransient("run_timeout")); // true false
 * ```
 */
export function isTransient(kind: ErrorKind): boolean {
  return TRANSIENT_ERROR_KINDS.includes(kind);
}
