/**
 * The rows of an export: one per measured candidate of a records database
 * (unmeasured candidates are left out), in run id, then trial order, with a
 * leakage-safe train/test split. Each format of `formats/` writes these rows;
 * {@link exportRecords} in `export.ts` picks the format and writes the file.
 *
 * ## Schema
 *
 * Every format but AutoTVM's has these columns, in this order
 * ({@link EXPORT_SCHEMA} holds the same list as data). Types: `integer`,
 * `number` (float64), `string`, and `json` — JSON *text* in a string column
 * (in every format, JSON Lines included, so one reader handles them all).
 * Nullable columns are marked `?`. The columns of {@link ADDED_EXPORT_COLUMNS}
 * came later: an import reads a file without them as null.
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
 * | `trial` | integer | trial number of the candidate within its run, from 1 |
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
 * | `verify_seconds` | number? | of `run_seconds`, seconds checking the output (Kernel Tuner's verification_time); null when not recorded |
 * | `strategy_seconds` | number? | the strategy's seconds for proposing the candidate (its round's share of propose + observe); null when not recorded |
 * | `framework_seconds` | number? | the rest of the loop's wall time since the previous result (keys, records, queueing); null when not recorded |
 * | `load1` | number? | 1-minute load average during the measurement; null when not recorded |
 * | `steal` | number? | fraction of CPU time stolen by the hypervisor over the batch; null when not recorded |
 * | `cpu_mhz` | number? | mean CPU frequency in MHz during the measurement; null when not recorded |
 * | `probe_gbps` | number? | the harness's speed probe around the repeats (GB/s of the slowest thread's sweep of twice its L2 cache, the slower of before and after); null when not recorded |
 * | `timestamp` | string | ISO 8601 time the result was recorded |
 * | `machine` | json | the run's machine description |
 * | `compiler` | string | the run's compiler identification |
 * | `tunebook_version` | string | tunebook version that made the run |
 * | `split` | string | `train` or `test` |
 *
 * ## Split
 *
 * The split is leakage-safe: whole workloads (by `workload_key`) are held
 * out, never some rows of a workload. `{ holdout: keys }` puts the named
 * workloads in `test`; `{ holdoutFraction, seed }` shuffles the sorted keys
 * with `createPrng(seed)` and puts the first `round(fraction * n)` in `test`
 * (at least one when the fraction is above 0 and at most n - 1 when it is
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { RecordsDB } from "./db.ts";
 * import { exportRows } from "./export_rows.ts";
 * import { importKernelTunerCache } from "./import.ts";
 * import { KERNELTUNER_DIR } from "./kerneltuner.ts";
 * const dir = await Deno.makeTempDir();
 * const db = RecordsDB.open(join(dir, "study.db"));
 * await importKernelTunerCache(db, join(KERNELTUNER_DIR, "pnpoly_RTX_3090.json.gz"));
 * const rows = exportRows(db, { split: { holdoutFraction: 0, seed: 1 } });
 * if (rows.length === 0 || rows[0].split !== "train") throw new Error();
 * db.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 * @module
 */
import { createPrng } from "../ir/prng.ts";
import { type Knob, KnobSpace } from "../ir/knobs.ts";
import type { RunRow, WorkloadRow } from "./db.ts";
import type { RecordsReader } from "./records_reader.ts";

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

/** Options of {@link exportRows} (and of `exportRecords`). */
export interface ExportOptions {
  /**
   * Export only these runs (default: every run but the finalists runs that
   * confirm a tuning run of the database, which are re-measurements of its
   * candidates, not candidates: strategy `finalists`, `run_config.confirms`
   * the tuning run; name them here to export their figures).
   */
  runs?: number[];
  /** Train/test split by workload (default: every row is `train`). */
  split?: SplitOptions;
  /** Features and knob spaces beyond the records (default {@link NO_FEATURES}). */
  describe?: RowDescriber;
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
  /** Trial number within the run, from 1 (the stored 0-based index + 1). */
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
  /** Verification seconds (part of run seconds) or null. */
  verify_seconds: number | null;
  /** Strategy seconds or null. */
  strategy_seconds: number | null;
  /** Framework seconds or null. */
  framework_seconds: number | null;
  /** 1-minute load average or null. */
  load1: number | null;
  /** Steal fraction or null. */
  steal: number | null;
  /** CPU MHz or null. */
  cpu_mhz: number | null;
  /** Speed probe GB/s or null. */
  probe_gbps: number | null;
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
  col("trial", "integer", false, "trial number of the candidate within its run, from 1"),
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
  col("verify_seconds", "number", true, "of run_seconds, seconds checking the output; null: none"),
  col(
    "strategy_seconds",
    "number",
    true,
    "the strategy's seconds for proposing it (share of propose + observe); null: none",
  ),
  col(
    "framework_seconds",
    "number",
    true,
    "the rest of the loop's wall time since the previous result; null: none",
  ),
  col("load1", "number", true, "1-minute load average during the measurement; null: unknown"),
  col("steal", "number", true, "fraction of CPU time stolen over the batch; null: unknown"),
  col("cpu_mhz", "number", true, "mean CPU frequency in MHz during it; null: unknown"),
  col(
    "probe_gbps",
    "number",
    true,
    "the harness's speed probe around the repeats, GB/s of the slowest thread's sweep; null: unknown",
  ),
  col("timestamp", "string", false, "ISO 8601 time the result was recorded"),
  col("machine", "json", false, "the run's machine description"),
  col("compiler", "string", false, "the run's compiler identification"),
  col("tunebook_version", "string", false, "tunebook version that made the run"),
  col("split", "string", false, "train or test (whole workloads are held out)"),
]);

/**
 * Columns added to the schema after its first version (all nullable): an
 * import reads a file that lacks them as null.
 */
export const ADDED_EXPORT_COLUMNS: ReadonlySet<string> = new Set([
  "verify_seconds",
  "strategy_seconds",
  "framework_seconds",
  "load1",
  "steal",
  "cpu_mhz",
  "probe_gbps",
]);

function col(name: keyof ExportRow, type: ColumnType, nullable: boolean, meaning: string) {
  return Object.freeze({ name, type, nullable, meaning });
}

/** A row with what the AutoTVM and Kernel Tuner writers need beyond the flat columns. */
export interface RowContext {
  /** The flat row, as {@link exportRows} gives it. */
  row: ExportRow;
  /** The candidate's knob indices (null: a trace candidate with no knobs). */
  knobs: number[] | null;
  /** The knob space the knobs index (undefined: none known for the row's workload). */
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
  return exportRowContexts(db, options).map((c) => c.row);
}

/**
 * The rows of an export with their knob vectors and knob spaces (what
 * {@link exportRows} returns, before the formats that need more than the
 * flat columns drop them).
 *
 * @throws {ExportError} for an unknown run or holdout workload, or a bad fraction
 */
export function exportRowContexts(db: RecordsReader, options: ExportOptions): RowContext[] {
  const describe = options.describe ?? NO_FEATURES;
  const all = db.runs();
  // A tuning run's finalists timed again (tuner/confirm.ts: strategy "finalists", config.confirms
  // its run) are re-measurements, not candidates: exported only when `runs` names them.
  const present = new Set(all.map((r) => r.id));
  let runs: RunRow[] = all.filter((r) =>
    !(r.strategy === "finalists" && present.has(r.config?.confirms as number))
  );
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
          // Numbered from 1 like every table, report and plot; the stored index is 0-based.
          trial: c.trial + 1,
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
          verify_seconds: r.verifySeconds ?? null,
          strategy_seconds: r.strategySeconds ?? null,
          framework_seconds: r.frameworkSeconds ?? null,
          load1: r.conditions?.load1 ?? null,
          steal: r.conditions?.steal ?? null,
          cpu_mhz: r.conditions?.cpuMhz ?? null,
          probe_gbps: r.conditions?.probeGBps ?? null,
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
