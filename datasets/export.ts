/**
 * Exports a records database as a data set: one row per measured candidate
 * (a candidate with a result; unmeasured candidates are left out), in CSV,
 * JSON Lines, Parquet or AutoTVM's log format.
 *
 * ## Schema
 *
 * Every format but AutoTVM's has these columns, in this order
 * ({@link EXPORT_SCHEMA} holds the same list as data). Types: `integer`,
 * `number` (float64), `string`, and `json` — JSON *text* in a string column
 * (in every format, JSON Lines included, so one reader handles them all).
 * Nullable columns are marked `?`.
 *
 * | column | type | meaning |
 * | --- | --- | --- |
 * | `run_id` | integer | id of the run in the exported database |
 * | `workload` | string | operator name, e.g. `matmul` |
 * | `shape` | json | problem shape, e.g. `[512,512,512]` |
 * | `workload_key` | string | `name:shape`, e.g. `matmul:512,512,512`; the unit of the split |
 * | `flops` | number | floating-point operations of one call (0 when unknown) |
 * | `target` | string | target of the run, e.g. `cpu` |
 * | `strategy` | string | search strategy of the run |
 * | `seed` | integer | seed of the run's search |
 * | `run_config` | json | the run's configuration (CLI arguments); a trace-file run's trace list is left out |
 * | `trial` | integer | trial number of the candidate within its run |
 * | `trace` | json | the candidate's schedule trace, as stored |
 * | `trace_hash` | string | hex SHA-256 of the canonical trace (unique within a run) |
 * | `knobs` | json? | knob vector (one option index per knob), null when the strategy had none |
 * | `feature_version` | string | version of `features` (`FEATURE_VERSION` of costmodel/features.ts; `none` in a plain export) |
 * | `features` | json? | `fixedFeatures(trace)` as a JSON array in `FIXED_FEATURE_NAMES` order; null when the trace does not replay or lower (or is not a tunebook trace, e.g. a Kernel Tuner import), and in a plain export (see {@link RowDescriber}: `deno task export` and the public `exportRecords` of mod.ts compute them) |
 * | `error_kind` | string | `none` or why the candidate failed (see `ir/error_kind.ts`) |
 * | `error` | string? | failure message |
 * | `times` | json | seconds per call, one per repeat (may be `[]` on error) |
 * | `seconds` | number? | median of `times`; null on error |
 * | `gflops` | number? | `flops / seconds / 1e9`; null on error (or when flops are unknown) |
 * | `build_seconds` | number | wall seconds spent building |
 * | `run_seconds` | number | wall seconds spent measuring |
 * | `timestamp` | string | ISO 8601 time the result was recorded |
 * | `machine` | json | the run's machine description |
 * | `compiler` | string | the run's compiler identification |
 * | `tunebook_version` | string | tunebook version that made the run |
 * | `split` | string | `train` or `test` |
 *
 * Format details:
 *
 * - **CSV** (RFC 4180, `\n` line ends, a header line): a field is quoted when
 *   it holds `,`, `"`, a line break or leading/trailing space, and a JSON
 *   field always is; `"` is doubled inside. An empty unquoted field is null;
 *   an empty string is written `""`.
 * - **JSON Lines**: one object per row with the keys above in order.
 * - **Parquet** (zstd): the columns above, except that `features` is replaced
 *   by one float64 column per feature, named `feature.<name>` for each name
 *   of the describer's feature names (null when the features are unavailable).
 *   Integers are int64, numbers float64, the rest UTF-8 strings.
 * - **AutoTVM** (`autotvm`): one JSON line per row, as AutoTVM's
 *   `record.encode` writes: `{"input": [target, task_name, args, kwargs],
 *   "config": {"index", "code_hash", "entity"}, "result": [costs, error_no,
 *   all_cost, timestamp], "version": 0.2, "tvm_version"}` — see
 *   {@link autotvmRecord} — plus a `tunebook` object with the row's identity.
 * - **Kernel Tuner cache** (`kerneltuner`): one JSON object as Kernel Tuner
 *   writes its cache files, for the knob-vector records of exactly one
 *   workload, so that an exhaustively measured space replays with
 *   `search/replay.ts` (and `compare --space FILE`) like the shared GPU
 *   caches. See {@link kernelTunerCacheOf}.
 * - **T4** (`t4`): the same records as the Kernel Tuner cache, in the
 *   community's T4 result format (`datasets/formats/t4.ts`); it reads back
 *   as a recorded space (`compare --space FILE`).
 *
 * ## Split
 *
 * The split is leakage-safe: whole workloads (by `workload_key`) are held
 * out, never some rows of a workload. `{ holdout: keys }` puts the named
 * workloads in `test`; `{ holdoutFraction, seed }` shuffles the sorted keys
 * with `createPrng(seed)` and puts the first `round(fraction * n)` in `test`
 * (at least one when the fraction is above 0 and at most n - 1 when it is
 * below 1). Without a split every row is `train`.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { RecordsDB } from "./db.ts";
 * import { exportRecords } from "./export.ts";
 * import { importKernelTunerCache } from "./import.ts";
 * import { KERNELTUNER_DIR } from "./kerneltuner.ts";
 * const dir = await Deno.makeTempDir();
 * const db = RecordsDB.open(join(dir, "study.db"));
 * for (const cache of ["pnpoly_RTX_3090", "convolution_A100"]) {
 *   await importKernelTunerCache(db, join(KERNELTUNER_DIR, `${cache}.json.gz`));
 * }
 * const s = await exportRecords(db, "csv", join(dir, "study.csv"), {
 *   split: { holdout: ["cn_pnpoly:20000000"] },
 * });
 * console.log(s.rows, s.test); // 8454 4092
 * db.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 * @module
 */
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { createPrng } from "../ir/prng.ts";
import { type Knob, KnobSpace } from "../ir/knobs.ts";
import type { ErrorKind, RunRow, WorkloadRow } from "./db.ts";
import type { RecordsReader } from "./records_reader.ts";
import { t4OfCache } from "./formats/t4.ts";

/** Formats {@link exportRecords} writes. */
export type ExportFormat = "csv" | "jsonl" | "parquet" | "autotvm" | "kerneltuner" | "t4";

/** Every export format. */
export const EXPORT_FORMATS: readonly ExportFormat[] = [
  "csv",
  "jsonl",
  "parquet",
  "autotvm",
  "kerneltuner",
  "t4",
];

/** How rows are split: named workloads held out, or a seeded fraction of the workloads. */
export type SplitOptions = { holdout: string[] } | { holdoutFraction: number; seed: number };

/**
 * What an export adds to the records: the features of each candidate and the
 * knob space of a run that declares none. The records sit at the bottom of
 * the layers, so this comes from above: `costmodel/export.ts`
 * (`featureDescriber`) computes tunebook's fixed features, and
 * `tuner/export.ts` adds the knob spaces of the templates.
 */
export interface RowDescriber {
  /** Value of the `feature_version` column. */
  featureVersion: string;
  /** Feature names in order (Parquet: one `feature.<name>` column each). */
  featureNames: readonly string[];
  /** Features of a stored trace (JSON text), or null when it has none. */
  features(trace: string): number[] | null;
  /** Knob space of a run whose config declares none (e.g. its knob template). */
  knobSpace?(run: RunRow, workload: WorkloadRow): KnobSpace | undefined;
}

/** The describer of a plain export: no features (`feature_version` `"none"`), declared knob spaces only. */
export const NO_FEATURES: RowDescriber = Object.freeze({
  featureVersion: "none",
  featureNames: [],
  features: () => null,
});

/** Options of {@link exportRecords}. */
export interface ExportOptions {
  /** Export only these runs (default: every run). */
  runs?: number[];
  /** Train/test split by workload (default: every row is `train`). */
  split?: SplitOptions;
  /** Features and knob spaces beyond the records (default {@link NO_FEATURES}). */
  describe?: RowDescriber;
}

/** What {@link exportRecords} wrote. */
export interface ExportSummary {
  /** Rows (records) written. */
  rows: number;
  /** Size of the file in bytes. */
  bytes: number;
  /** Path written (as given). */
  path: string;
  /** Format written. */
  format: ExportFormat;
  /** Rows in `train`. */
  train: number;
  /** Rows in `test`. */
  test: number;
  /** Workload keys in `test`, sorted. */
  testWorkloads: string[];
}

/** Error for a bad export request (unknown run, unknown holdout workload, bad fraction...). */
export class ExportError extends Error {
  /**
   * Creates the error.
   *
   * @param message what is wrong, naming the offending value
   */
  constructor(message: string) {
    super(message);
    this.name = "ExportError";
  }
}

/** Type of an exported column. `json` is JSON text in a string column. */
export type ColumnType = "integer" | "number" | "string" | "json";

/** One column of the export schema. */
export interface ColumnSpec {
  /** Column name. */
  name: keyof ExportRow;
  /** Column type. */
  type: ColumnType;
  /** True when the column may be null. */
  nullable: boolean;
  /** What the column holds. */
  meaning: string;
}

/** One exported row; see {@link EXPORT_SCHEMA} for each column's meaning. */
export interface ExportRow {
  /** Run id. */
  run_id: number;
  /** Operator name. */
  workload: string;
  /** Shape, JSON. */
  shape: string;
  /** `name:shape`. */
  workload_key: string;
  /** Flops of one call. */
  flops: number;
  /** Target of the run. */
  target: string;
  /** Strategy of the run. */
  strategy: string;
  /** Seed of the run. */
  seed: number;
  /** Run configuration, JSON. */
  run_config: string;
  /** Trial number. */
  trial: number;
  /** Trace, JSON. */
  trace: string;
  /** Trace hash. */
  trace_hash: string;
  /** Knob vector, JSON, or null. */
  knobs: string | null;
  /** Feature version. */
  feature_version: string;
  /** Fixed features, JSON array, or null. */
  features: string | null;
  /** Error kind. */
  error_kind: string;
  /** Error message or null. */
  error: string | null;
  /** Seconds per repeat, JSON array. */
  times: string;
  /** Median seconds or null. */
  seconds: number | null;
  /** GFLOP/s or null. */
  gflops: number | null;
  /** Build seconds. */
  build_seconds: number;
  /** Run seconds. */
  run_seconds: number;
  /** ISO time of the result. */
  timestamp: string;
  /** Machine, JSON. */
  machine: string;
  /** Compiler. */
  compiler: string;
  /** tunebook version. */
  tunebook_version: string;
  /** `train` or `test`. */
  split: "train" | "test";
}

/** The export schema: every column in order, with its type and meaning (see the module doc). */
export const EXPORT_SCHEMA: readonly ColumnSpec[] = Object.freeze([
  col("run_id", "integer", false, "id of the run in the exported database"),
  col("workload", "string", false, "operator name, e.g. matmul"),
  col("shape", "json", false, "problem shape as a JSON array, e.g. [512,512,512]"),
  col(
    "workload_key",
    "string",
    false,
    "name:shape, e.g. matmul:512,512,512; the unit of the split",
  ),
  col("flops", "number", false, "floating-point operations of one call (0 when unknown)"),
  col("target", "string", false, "target of the run, e.g. cpu"),
  col("strategy", "string", false, "search strategy of the run"),
  col("seed", "integer", false, "seed of the run's search"),
  col("run_config", "json", false, "the run's configuration; a trace-file run's traces left out"),
  col("trial", "integer", false, "trial number of the candidate within its run"),
  col("trace", "json", false, "the candidate's schedule trace, as stored"),
  col("trace_hash", "string", false, "hex SHA-256 of the canonical trace (unique within a run)"),
  col("knobs", "json", true, "knob vector (option index per knob); null when there is none"),
  col(
    "feature_version",
    "string",
    false,
    "feature version (FEATURE_VERSION) of features; none without features",
  ),
  col(
    "features",
    "json",
    true,
    "fixedFeatures(trace) as a JSON array in FIXED_FEATURE_NAMES order (Parquet: one " +
      "feature.<name> float64 column each); null when the trace does not replay or lower",
  ),
  col("error_kind", "string", false, "none, or why the candidate failed"),
  col("error", "string", true, "failure message"),
  col("times", "json", false, "JSON array of seconds per call, one per repeat"),
  col("seconds", "number", true, "median of times; null on error"),
  col("gflops", "number", true, "flops / seconds / 1e9; null on error or unknown flops"),
  col("build_seconds", "number", false, "wall seconds spent building"),
  col("run_seconds", "number", false, "wall seconds spent measuring"),
  col("timestamp", "string", false, "ISO 8601 time the result was recorded"),
  col("machine", "json", false, "the run's machine description"),
  col("compiler", "string", false, "the run's compiler identification"),
  col("tunebook_version", "string", false, "tunebook version that made the run"),
  col("split", "string", false, "train or test (whole workloads are held out)"),
]);

function col(name: keyof ExportRow, type: ColumnType, nullable: boolean, meaning: string) {
  return Object.freeze({ name, type, nullable, meaning });
}

/** Names of the Parquet feature columns of a describer: `feature.<name>` per feature. */
export function parquetFeatureColumns(describe: RowDescriber = NO_FEATURES): string[] {
  return describe.featureNames.map((n) => `feature.${n}`);
}

/** A row with what the AutoTVM writer needs beyond the flat columns. */
interface RowContext {
  row: ExportRow;
  knobs: number[] | null;
  space: KnobSpace | undefined;
}

/**
 * The rows of an export, in run id, then trial order, with their split.
 *
 * @param db the records database
 * @param options runs to export and the split
 * @throws {ExportError} for an unknown run or holdout workload, or a bad fraction
 */
export function exportRows(db: RecordsReader, options: ExportOptions = {}): ExportRow[] {
  return collect(db, options).map((c) => c.row);
}

function collect(db: RecordsReader, options: ExportOptions): RowContext[] {
  const describe = options.describe ?? NO_FEATURES;
  const all = db.runs();
  let runs: RunRow[] = all;
  if (options.runs !== undefined) {
    const byId = new Map(all.map((r) => [r.id, r]));
    runs = [...new Set(options.runs)].sort((a, b) => a - b).map((id) => {
      const r = byId.get(id);
      if (!r) throw new ExportError(`No run ${id} in records database "${db.path}"`);
      return r;
    });
  }
  const out: RowContext[] = [];
  const workloads = new Map<number, WorkloadRow>();
  for (const run of runs) {
    let w = workloads.get(run.workloadId);
    if (!w) {
      w = db.workload(run.workloadId)!;
      workloads.set(run.workloadId, w);
    }
    const config = { ...run.config };
    if ("traces" in config) delete config.traces;
    const runConfig = JSON.stringify(config);
    const machine = JSON.stringify(run.machine);
    const shape = JSON.stringify(w.shape);
    let space: KnobSpace | undefined | null = null;
    for (const c of db.candidates(run.id)) {
      const r = c.result;
      if (!r) continue;
      if (c.knobs && space === null) space = knobSpaceOf(run, w, describe);
      out.push({
        knobs: c.knobs,
        space: space ?? undefined,
        row: {
          run_id: run.id,
          workload: w.name,
          shape,
          workload_key: w.key,
          flops: w.flops,
          target: run.target,
          strategy: run.strategy,
          seed: run.seed,
          run_config: runConfig,
          trial: c.trial,
          trace: c.trace,
          trace_hash: c.traceHash,
          knobs: c.knobs === null ? null : JSON.stringify(c.knobs),
          feature_version: describe.featureVersion,
          features: featuresOf(c.trace, describe),
          error_kind: r.errorKind,
          error: r.error,
          times: JSON.stringify(r.times),
          seconds: r.seconds,
          gflops: r.gflops,
          build_seconds: r.buildSeconds,
          run_seconds: r.runSeconds,
          timestamp: r.timestamp,
          machine,
          compiler: run.compiler,
          tunebook_version: run.tunebookVersion,
          split: "train",
        },
      });
    }
  }
  const test = testWorkloads(out.map((c) => c.row.workload_key), options.split);
  for (const c of out) if (test.has(c.row.workload_key)) c.row.split = "test";
  return out;
}

function featuresOf(trace: string, describe: RowDescriber): string | null {
  try {
    const f = describe.features(trace);
    return f === null ? null : JSON.stringify(f);
  } catch {
    return null;
  }
}

/**
 * The knob space of a run's candidates: the run config's `knobSpace` (a list
 * of `{name, kind, options}`, as a Kernel Tuner import stores), else the
 * describer's (the run's knob template on its workload); undefined when
 * neither works.
 */
function knobSpaceOf(run: RunRow, w: WorkloadRow, describe: RowDescriber): KnobSpace | undefined {
  const declared = run.config.knobSpace;
  try {
    if (Array.isArray(declared)) return new KnobSpace(declared as Knob[]);
    return describe.knobSpace?.(run, w);
  } catch {
    return undefined;
  }
}

/**
 * The workload keys held out for `test`.
 *
 * @param keys workload keys of the rows (repeats allowed)
 * @param split the split options
 * @throws {ExportError} for a holdout key absent from `keys` or a fraction outside [0, 1]
 */
export function testWorkloads(keys: readonly string[], split?: SplitOptions): Set<string> {
  const present = [...new Set(keys)].sort();
  if (!split) return new Set();
  if ("holdout" in split) {
    const known = new Set(present);
    const missing = split.holdout.filter((k) => !known.has(k));
    if (missing.length > 0) {
      throw new ExportError(
        `Holdout workload ${missing.map((k) => JSON.stringify(k)).join(", ")} has no exported ` +
          `rows; workloads: ${present.join(" ") || "(none)"}`,
      );
    }
    return new Set(split.holdout);
  }
  const { holdoutFraction: f, seed } = split;
  if (!(Number.isFinite(f) && f >= 0 && f <= 1)) {
    throw new ExportError(`Holdout fraction must be between 0 and 1, got ${f}`);
  }
  if (!Number.isInteger(seed)) throw new ExportError(`Split seed must be an integer, got ${seed}`);
  const n = present.length;
  let k = Math.round(f * n);
  if (f > 0 && n > 1) k = Math.max(k, 1);
  if (f < 1 && n > 1) k = Math.min(k, n - 1);
  const prng = createPrng(seed);
  const shuffled = [...present];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  return new Set(shuffled.slice(0, k));
}

// ---------------------------------------------------------------------------
// CSV and JSON Lines

/**
 * One CSV field: quoted when it holds `,`, `"`, a line break or leading or
 * trailing space, or when `quote` is true; null is an empty unquoted field
 * and the empty string `""`.
 *
 * @param value the value
 * @param quote quote even when not needed (the export does for JSON columns)
 */
export function csvField(value: string | number | null, quote = false): string {
  if (value === null) return "";
  const s = typeof value === "number" ? String(value) : value;
  if (s === "") return '""';
  return quote || /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replaceAll('"', '""')}"` : s;
}

/** The CSV header line (no line end). */
export function csvHeader(): string {
  return EXPORT_SCHEMA.map((c) => c.name).join(",");
}

/** One row as a CSV line (no line end). */
export function csvLine(row: ExportRow): string {
  return EXPORT_SCHEMA.map((c) => csvField(row[c.name], c.type === "json")).join(",");
}

/** One row as a JSON Lines line: an object with the schema's keys in order. */
export function jsonLine(row: ExportRow): string {
  return JSON.stringify(Object.fromEntries(EXPORT_SCHEMA.map((c) => [c.name, row[c.name]])));
}

// ---------------------------------------------------------------------------
// AutoTVM

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
    input: [row.target === "cpu" ? "c" : row.target, row.workload, JSON.parse(row.shape), {}],
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

// ---------------------------------------------------------------------------
// Parquet

async function parquetBytes(
  rows: readonly ExportRow[],
  describe: RowDescriber,
): Promise<Uint8Array> {
  const fl = await import("npm:@uwdata/flechette@2.6.0");
  const pq = await import("npm:parquet-wasm@0.8.0");
  const columns: [string, unknown[]][] = [];
  const types: Record<string, unknown> = {};
  for (const c of EXPORT_SCHEMA) {
    if (c.name === "features") {
      const parsed = rows.map((r) => (r.features === null ? null : JSON.parse(r.features)));
      parquetFeatureColumns(describe).forEach((name, i) => {
        columns.push([name, parsed.map((f) => (f === null ? null : f[i] ?? null))]);
        types[name] = fl.float64();
      });
      continue;
    }
    columns.push([c.name, rows.map((r) => r[c.name])]);
    types[c.name] = c.type === "integer"
      ? fl.int64()
      : c.type === "number"
      ? fl.float64()
      : fl.utf8();
  }
  // deno-lint-ignore no-explicit-any
  const table = fl.tableFromArrays(columns as any, { types: types as any });
  const ipc = fl.tableToIPC(table, { format: "stream" });
  if (!ipc) throw new Error("Arrow IPC encoding produced nothing");
  const arrow = pq.Table.fromIPCStream(ipc);
  const props = new pq.WriterPropertiesBuilder()
    .setCompression(pq.Compression.ZSTD)
    .setCreatedBy("tunebook export")
    .build();
  return pq.writeParquet(arrow, props);
}

// ---------------------------------------------------------------------------
// Writing

/**
 * Writes the measured candidates of `db` to `out` in `format` (see the
 * module doc for the schema and each format). The file is written to a
 * temporary name beside `out` and renamed, so `out` is never half written;
 * its directory is created when missing.
 *
 * @param db the records database
 * @param format `csv`, `jsonl`, `parquet` or `autotvm`
 * @param out path of the file to write
 * @param options runs to export and the train/test split
 * @returns rows and bytes written, and the split's sizes
 * @throws {ExportError} for an unknown format, run or holdout workload, or a bad fraction
 */
export async function exportRecords(
  db: RecordsReader,
  format: ExportFormat,
  out: string,
  options: ExportOptions = {},
): Promise<ExportSummary> {
  if (!EXPORT_FORMATS.includes(format)) {
    throw new ExportError(
      `Unknown export format ${JSON.stringify(format)}; known: ${EXPORT_FORMATS.join(", ")}`,
    );
  }
  const ctx = collect(db, options);
  const rows = ctx.map((c) => c.row);
  let data: Uint8Array | string;
  if (format === "parquet") data = await parquetBytes(rows, options.describe ?? NO_FEATURES);
  else if (format === "csv") data = [csvHeader(), ...rows.map(csvLine)].join("\n") + "\n";
  else if (format === "jsonl") data = rows.map((r) => jsonLine(r) + "\n").join("");
  else if (format === "kerneltuner") data = JSON.stringify(kernelTunerCacheOf(ctx), null, 1) + "\n";
  else if (format === "t4") data = JSON.stringify(t4OfCache(kernelTunerCacheOf(ctx))) + "\n";
  else {
    data = ctx.map((c) => JSON.stringify(autotvmRecord(c.row, c.knobs, c.space)) + "\n").join("");
  }
  const full = resolve(out);
  await mkdir(dirname(full), { recursive: true });
  const tmp = `${full}.tmp-${Deno.pid}`;
  try {
    await writeFile(tmp, data);
    await rename(tmp, full);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  const test = rows.filter((r) => r.split === "test");
  return {
    rows: rows.length,
    bytes: (await stat(full)).size,
    path: out,
    format,
    train: rows.length - test.length,
    test: test.length,
    testWorkloads: [...new Set(test.map((r) => r.workload_key))].sort(),
  };
}

/** Kernel Tuner's error markers for tunebook's error kinds (the inverse of the importer's map). */
export const KERNEL_TUNER_MARKERS: Readonly<Record<Exclude<ErrorKind, "none">, string>> = Object
  .freeze({
    instantiation_error: "InvalidConfig",
    compile_host: "CompilationFailedConfig",
    build_timeout: "CompilationFailedConfig",
    runtime_crash: "RuntimeFailedConfig",
    runtime_error: "RuntimeFailedConfig",
    run_timeout: "RuntimeFailedConfig",
    wrong_answer: "RuntimeFailedConfig",
    no_device: "RuntimeFailedConfig",
    unknown: "RuntimeFailedConfig",
    worker_lost: "RuntimeFailedConfig",
    run_timeout_transient: "RuntimeFailedConfig",
  });

/**
 * A knob's options as Kernel Tuner parameter values: a split's innermost
 * factor when those are distinct (else all its factors, `4x16`), a scalar
 * as itself, anything else as JSON.
 */
function ktValues(options: readonly unknown[]): (number | string | boolean)[] {
  const inner = options.map((o) => Array.isArray(o) ? o[o.length - 1] : undefined);
  const innerOnly = new Set(inner).size === options.length;
  return options.map((o, i) => {
    if (Array.isArray(o)) return innerOnly ? inner[i] as number : o.join("x");
    if (typeof o === "number" || typeof o === "string" || typeof o === "boolean") return o;
    return JSON.stringify(o);
  });
}

/**
 * Builds a Kernel Tuner cache (as its cache JSON files hold) from the
 * knob-vector records of one workload: `tune_params` are the knobs of the
 * records' knob space (a split knob's value is its innermost factor, e.g.
 * `tile_ic: 16` for the split `[4, 16]`, or `"4x16"` when inner factors
 * repeat), `time` and `times` are in milliseconds, a failed record's `time`
 * is Kernel Tuner's marker (see {@link KERNEL_TUNER_MARKERS}), and
 * `compile_time`/`benchmark_time` are the build and run wall times in ms.
 * When a configuration was measured more than once, the first record wins.
 * `kernel_name` is the workload key (e.g. `conv2d:1,64,56,56,64,3,3,1,1`),
 * `device_name` the CPU model with its thread count, `problem_size` the
 * workload's shape. A `tunebook` object adds the workload key, the run ids
 * and the machine description.
 *
 * @throws {ExportError} when the rows span several workloads or knob spaces, or have no knob vectors
 */
export function kernelTunerCacheOf(ctx: readonly RowContext[]): Record<string, unknown> {
  const rows = ctx.filter((c) => c.knobs !== null);
  if (rows.length === 0) {
    throw new ExportError(
      "The kerneltuner format needs records with knob vectors (runs of a knob template); none selected",
    );
  }
  const keys = [...new Set(rows.map((c) => c.row.workload_key))];
  if (keys.length > 1) {
    throw new ExportError(
      `The kerneltuner format holds one workload, but the selected runs measure ${keys.length} (${
        keys.join(", ")
      }); choose runs with --runs`,
    );
  }
  const space = rows[0].space;
  if (!space) throw new ExportError(`No knob space is known for the runs of ${keys[0]}`);
  const names = space.knobs.map((k) => k.name);
  for (const c of rows) {
    if (c.space && c.space.knobs.map((k) => k.name).join() !== names.join()) {
      throw new ExportError(
        `Runs of ${keys[0]} use different knob spaces (${names.join(",")} and ${
          c.space.knobs.map((k) => k.name).join(",")
        }); choose runs with --runs`,
      );
    }
  }
  const tuneParams: Record<string, (number | string | boolean)[]> = {};
  for (const k of space.knobs) tuneParams[k.name] = ktValues(k.options);
  const cache: Record<string, Record<string, unknown>> = {};
  for (const c of rows) {
    const values = c.knobs!.map((i, j) => tuneParams[names[j]][i]);
    const key = values.join(",");
    if (key in cache) continue;
    const r = c.row;
    const entry: Record<string, unknown> = {};
    names.forEach((n, j) => entry[n] = values[j]);
    const times = (JSON.parse(r.times) as number[]).map((t) => t * 1e3);
    entry.time = r.error_kind === "none"
      ? r.seconds! * 1e3
      : KERNEL_TUNER_MARKERS[r.error_kind as Exclude<ErrorKind, "none">];
    entry.times = times;
    entry.compile_time = r.build_seconds * 1e3;
    entry.verification_time = 0;
    entry.benchmark_time = r.run_seconds * 1e3;
    entry.strategy_time = 0;
    entry.framework_time = 0;
    entry.timestamp = r.timestamp;
    cache[key] = entry;
  }
  const first = rows[0].row;
  const machine = JSON.parse(first.machine) as Record<string, unknown>;
  return {
    device_name: `${machine.cpu ?? "unknown CPU"} (${
      machine.ompNumThreads ?? machine.cores
    } threads)`,
    kernel_name: first.workload_key,
    problem_size: JSON.parse(first.shape),
    tune_params_keys: names,
    tune_params: tuneParams,
    objective: "time",
    cache,
    tunebook: {
      workload_key: first.workload_key,
      runs: [...new Set(rows.map((c) => c.row.run_id))],
      machine,
      compiler: first.compiler,
      tunebook_version: first.tunebook_version,
    },
  };
}
