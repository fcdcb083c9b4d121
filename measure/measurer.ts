/**
 * The one measurement protocol (MetaSchedule's Builder + Runner behind one
 * call, Kernel Tuner's live and simulation runners behind one interface): a
 * {@link Measurer} takes a batch of candidates and returns one
 * {@link MeasureResult} each, times or an error kind, never a throw for a
 * faulty kernel. Implementations: the native CPU (gcc), CUDA (nvcc), OpenCL on
 * PoCL, replay of recorded data (Kernel Tuner caches, our own records) and a
 * remote queue of workers. The tuning loop (`tuner/`) talks only to this.
 *
 * @example
 * ```ts
 * import type { Measurer, MeasureResult } from "./measurer.ts";
 * // A replay of two recorded knob points: a lookup, no kernel runs.
 * const table = new Map<string, MeasureResult>([
 *   ["0", { errorKind: "none", times: [2e-3], buildSeconds: 0, runSeconds: 0 }],
 *   ["1", { errorKind: "none", times: [1e-3], buildSeconds: 0, runSeconds: 0 }],
 * ]);
 * const replay: Measurer = {
 *   name: "replay",
 *   measure: (batch) =>
 *     Promise.resolve(batch.map((c) => table.get(String(c.knobs?.[0]))!)),
 * };
 * const [r] = await replay.measure([{ knobs: [1] }]);
 * if (r.times[0] !== 1e-3) throw new Error();
 * ```
 * @module
 */
import type { Candidate } from "../ir/candidate.ts";
import type { ErrorKind } from "../ir/error_kind.ts";
import type { MeasureConditions } from "../ir/conditions.ts";

/** What measuring one candidate gave: the records database stores exactly this. */
export interface MeasureResult {
  /** `"none"` when the kernel built, ran and its output was correct. */
  errorKind: ErrorKind;
  /** Why it failed (compiler output, signal, largest error), when it did. */
  error?: string;
  /** Seconds per call, one entry per repeat; empty on failure. */
  times: number[];
  /** Wall seconds spent building it (0 when cached or replayed). */
  buildSeconds: number;
  /** Wall seconds its measurement took (running time only, never queue time). */
  runSeconds: number;
  /**
   * Of `runSeconds`, the wall seconds spent checking its output against the
   * reference (Kernel Tuner's verification_time). Absent when not measured
   * (replay, a failure before the check).
   */
  verifySeconds?: number;
  /** The machine's conditions during the measurement (measure/conditions.ts); absent: unknown. */
  conditions?: MeasureConditions;
}

/** Options of one {@link Measurer.measure} call. */
export interface MeasureBatchOptions {
  /**
   * Racing: a candidate whose first repeat is slower than this many seconds
   * per call gets no further repeats. Default: every repeat.
   */
  cutoffSeconds?: number;
  /**
   * Called as each result arrives (index into the batch), before the call returns. Default:
   * nothing.
   */
  onResult?: (index: number, result: MeasureResult) => void;
}

/** Measures batches of candidates; see the module documentation. */
export interface Measurer {
  /** Name for records and messages, e.g. `"native-cpu"`, `"replay:gemm_RTX_3090"`. */
  readonly name: string;
  /**
   * One result per candidate, in the batch's order. Faulty kernels are
   * results with an error kind; a throw means the measurer itself failed
   * (a lost queue, a missing compiler) and the run stops, resumable.
   */
  measure(batch: readonly Candidate[], options?: MeasureBatchOptions): Promise<MeasureResult[]>;
  /** Releases workers, temporary files, connections. */
  close?(): Promise<void>;
}
