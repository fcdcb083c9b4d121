/**
 * The AutoTVM log export format (`autotvm`): one JSON line per row, as
 * AutoTVM's `record.encode` writes: `{"input": [target, task_name, args,
 * kwargs], "config": {"index", "code_hash", "entity"}, "result": [costs,
 * error_no, all_cost, timestamp], "version": 0.2, "tvm_version"}` (see
 * {@link autotvmRecord}) plus a `tunebook` object with the row's identity.
 * @module
 */
import type { KnobSpace } from "../../ir/knobs.ts";
import { tvmTargetName } from "../../ir/target.ts";
import type { ErrorKind } from "../db.ts";
import type { ExportRow } from "../export_rows.ts";
import type { ExportFormatWriter } from "./format.ts";

/** AutoTVM's `MeasureErrorNo` of each error kind. */
export const AUTOTVM_ERROR_NO: Readonly<Record<ErrorKind, number>> = Object.freeze({
  none: 0, // NO_ERROR
  instantiation_error: 1, // INSTANTIATION_ERROR
  compile_host: 2, // COMPILE_HOST
  runtime_crash: 4, // RUNTIME_DEVICE
  runtime_error: 4, // RUNTIME_DEVICE
  no_device: 4, // RUNTIME_DEVICE (no device to run on)
  wrong_answer: 5, // WRONG_ANSWER
  build_timeout: 6, // BUILD_TIMEOUT
  run_timeout: 7, // RUN_TIMEOUT
  unknown: 8, // UNKNOWN_ERROR
  worker_lost: 4, // RUNTIME_DEVICE (the worker was killed from outside)
  run_timeout_transient: 7, // RUN_TIMEOUT (while the machine was loaded)
  build_timeout_transient: 6, // BUILD_TIMEOUT (while the machine was loaded)
});

/** An AutoTVM log record (`record.encode` in JSON form) with tunebook's extra field. */
export interface AutoTVMRecord {
  /** `[target, task_name, args, kwargs]`. */
  input: [string, string, unknown[], Record<string, unknown>];
  /** The configuration. */
  config: { index: number; code_hash: null; entity: [string, string, unknown][] };
  /** `[costs, error_no, all_cost, timestamp]`. */
  result: [number[], number, number, number];
  /** AutoTVM log format version. */
  version: 0.2;
  /** Version string of the producer. */
  tvm_version: string;
  /** The row's identity in tunebook (and the trace when the entity is empty). */
  tunebook: Record<string, unknown>;
}

/**
 * The AutoTVM record of a row.
 *
 * - `input`: target `cpu` becomes TVM's `c` (C source compiled by the host
 *   compiler; others pass through), task name = workload name, args = shape,
 *   kwargs = `{}`.
 * - `config.entity`: `[[knob, "sp"|"re"|"an"|"ot", value], …]` from the
 *   candidate's knobs and its run's knob space (template or declared space);
 *   knobs whose space is unknown become `["knob<i>", "ot", index]`; no knobs
 *   gives `[]` and the trace goes in `tunebook.trace`. `index` is the flat
 *   index of the knobs in the space (-1 when unknown).
 * - `result`: costs = `times` (seconds per repeat; `[]` for an error without
 *   times), error_no by {@link AUTOTVM_ERROR_NO}, all_cost = build + run
 *   seconds, timestamp in Unix seconds.
 *
 * @param row the exported row
 * @param knobs its knob vector, if any
 * @param space the knob space of its run, if known
 */
export function autotvmRecord(
  row: ExportRow,
  knobs: number[] | null,
  space?: KnobSpace,
): AutoTVMRecord {
  let entity: [string, string, unknown][] = [];
  let index = -1;
  if (knobs) {
    try {
      if (!space) throw new Error("no space");
      entity = space.entity(knobs);
      index = space.index(knobs);
    } catch {
      entity = knobs.map((k, i) => [`knob${i}`, "ot", k]);
      index = -1;
    }
  }
  const tunebook: Record<string, unknown> = {
    run_id: row.run_id,
    workload_key: row.workload_key,
    target: row.target,
    strategy: row.strategy,
    trial: row.trial,
    trace_hash: row.trace_hash,
    error_kind: row.error_kind,
    error: row.error,
    split: row.split,
  };
  if (entity.length === 0) {
    try {
      tunebook.trace = JSON.parse(row.trace);
    } catch {
      tunebook.trace = row.trace;
    }
  }
  return {
    input: [tvmTargetName(row.target), row.workload, JSON.parse(row.shape), {}],
    config: { index, code_hash: null, entity },
    result: [
      JSON.parse(row.times),
      AUTOTVM_ERROR_NO[row.error_kind as ErrorKind] ?? 8,
      row.build_seconds + row.run_seconds,
      Date.parse(row.timestamp) / 1000,
    ],
    version: 0.2,
    tvm_version: `tunebook ${row.tunebook_version}`,
    tunebook,
  };
}

/**
 * The `autotvm` format.
 *
 * @example
 * ```ts
 * import { AUTOTVM_FORMAT } from "./autotvm.ts";
 * if (AUTOTVM_FORMAT.name !== "autotvm") throw new Error();
 * ```
 */
export const AUTOTVM_FORMAT: ExportFormatWriter = Object.freeze<ExportFormatWriter>({
  name: "autotvm",
  encode: (ctx) =>
    ctx.map((c) => JSON.stringify(autotvmRecord(c.row, c.knobs, c.space)) + "\n").join(""),
});
