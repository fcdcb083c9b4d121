/**
 * Imports records into a records database:
 *
 * - {@link importRecords}: our own CSV or JSON Lines exports (see
 *   `export.ts`). Each exported run becomes a new, finished run (with a new
 *   id: the result maps old ids to new ones) with its workload, candidates
 *   and results, so export -> import -> export gives the same rows (up to the
 *   run ids). Derived columns (`features`, `feature_version`, `seconds`,
 *   `gflops`, `split`) are recomputed, not read.
 * - {@link importKernelTunerCache}: a Kernel Tuner cache file as one run of
 *   strategy `kerneltuner-cache`: one candidate per cached configuration,
 *   with its knob vector (option index per tuning parameter), its times (ms
 *   in the cache, seconds here) and an error kind from its marker.
 *
 * {@link RecordsDB.addResult} stamps results with the current time and
 * computes gflops from the workload's flops. To keep the recorded times (and
 * null gflops when flops are unknown), the importers then update those
 * results through a second connection to the same file; that is not
 * possible for a `":memory:"` database, where the import time and a gflops
 * of 0 stay (`preserved` is false in the summary).
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { RecordsDB } from "./db.ts";
 * import { importKernelTunerCache } from "./import.ts";
 * import { KERNELTUNER_DIR } from "./kerneltuner.ts";
 * const dir = await Deno.makeTempDir();
 * const db = RecordsDB.open(join(dir, "kt.db"));
 * const s = await importKernelTunerCache(db, join(KERNELTUNER_DIR, "pnpoly_RTX_3090.json.gz"));
 * console.log(s.rows, s.errors); // 4092 330
 * db.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 * @module
 */
import { median } from "../ir/stats.ts";
import { DatabaseSync } from "node:sqlite";
import { basename } from "node:path";
import { ERROR_KINDS } from "../ir/error_kind.ts";
import { canonicalJSON } from "../ir/trace.ts";
import { tunebookVersion } from "./machine.ts";
import { type ErrorKind, optionalParts, type RecordsDB } from "./db.ts";
import { ADDED_EXPORT_COLUMNS, EXPORT_SCHEMA, type ExportRow } from "./export_rows.ts";
import {
  deviceOf,
  type KernelTunerCache,
  KernelTunerError,
  readKernelTunerJSON,
  validateCache,
} from "./kerneltuner.ts";

/** Error for a file that cannot be imported; names the file and, when known, the line. */
export class ImportError extends Error {
  /** The file. */
  readonly file: string;
  /** 1-based line (CSV: the record's first line), when known. */
  readonly line?: number;

  /**
   * Creates the error; the message is `file:line: detail`.
   *
   * @param file the file
   * @param detail what is wrong
   * @param line 1-based line, when known
   * @param options standard error options (`cause`)
   */
  constructor(file: string, detail: string, line?: number, options?: ErrorOptions) {
    super(`${file}${line === undefined ? "" : `:${line}`}: ${detail}`, options);
    this.name = "ImportError";
    this.file = file;
    this.line = line;
  }
}

/** What {@link importRecords} did. */
export interface ImportSummary {
  /** Runs created. */
  runs: number;
  /** Rows (candidates with a result) imported. */
  rows: number;
  /** Exported run id -> id of the run created for it. */
  runIds: Map<number, number>;
  /** True when the results' timestamps (and null gflops) were restored; see the module doc. */
  preserved: boolean;
}

/** What {@link importKernelTunerCache} did. */
export interface KernelTunerImportSummary {
  /** Id of the run created. */
  runId: number;
  /** Configurations imported. */
  rows: number;
  /** Configurations with an error marker. */
  errors: number;
  /** Workload key of the run. */
  workloadKey: string;
  /** Flops of one call used for gflops (0: unknown, gflops null). */
  flops: number;
  /** True when the cache's timestamps (and null gflops) were stored; see the module doc. */
  preserved: boolean;
}

// ---------------------------------------------------------------------------
// CSV

/** A parsed CSV field: its text and whether it was quoted (an unquoted empty field is null). */
export interface CSVField {
  /** The field's text, quotes removed and `""` undoubled. */
  text: string;
  /** True when the field was quoted. */
  quoted: boolean;
}

/** A parsed CSV record with the 1-based line it starts on. */
export interface CSVRecord {
  /** Line of the record's first character. */
  line: number;
  /** Its fields. */
  fields: CSVField[];
}

/**
 * Parses RFC 4180 CSV (`\n` or `\r\n` line ends, quoted fields may hold
 * commas, quotes doubled and line breaks). A final line end is optional;
 * empty lines are skipped.
 *
 * @param text the CSV text
 * @throws {SyntaxError} for a quote inside an unquoted field, text after a
 * closing quote, or an unterminated quoted field (naming the line)
 */
export function parseCSV(text: string): CSVRecord[] {
  const out: CSVRecord[] = [];
  let i = 0, line = 1;
  const n = text.length;
  while (i < n) {
    if (text[i] === "\n" || (text[i] === "\r" && text[i + 1] === "\n")) {
      i += text[i] === "\r" ? 2 : 1;
      line++;
      continue;
    }
    const start = line;
    const fields: CSVField[] = [];
    for (;;) {
      let field: CSVField;
      if (text[i] === '"') {
        let s = "";
        i++;
        for (;;) {
          if (i >= n) throw new SyntaxError(`line ${start}: unterminated quoted field`);
          const q = text.indexOf('"', i);
          if (q < 0) throw new SyntaxError(`line ${start}: unterminated quoted field`);
          const chunk = text.slice(i, q);
          for (const ch of chunk) if (ch === "\n") line++;
          s += chunk;
          if (text[q + 1] === '"') {
            s += '"';
            i = q + 2;
          } else {
            i = q + 1;
            break;
          }
        }
        field = { text: s, quoted: true };
        if (i < n && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r") {
          throw new SyntaxError(`line ${line}: text after a closing quote`);
        }
      } else {
        let j = i;
        while (j < n && text[j] !== "," && text[j] !== "\n" && text[j] !== "\r") j++;
        const s = text.slice(i, j);
        if (s.includes('"')) throw new SyntaxError(`line ${line}: quote inside an unquoted field`);
        field = { text: s, quoted: false };
        i = j;
      }
      fields.push(field);
      if (text[i] === ",") {
        i++;
        continue;
      }
      break;
    }
    out.push({ line: start, fields });
    if (text[i] === "\r" && text[i + 1] === "\n") i += 2;
    else if (text[i] === "\n") i++;
    else if (i < n) throw new SyntaxError(`line ${line}: stray carriage return`);
    line++;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Our exports

type Raw = Record<string, unknown>;

const ERROR_KIND_SET: ReadonlySet<string> = new Set(ERROR_KINDS);

/** Rows of an export file as raw values by column name, with their lines. */
function readRows(text: string, format: "csv" | "jsonl", file: string): [Raw, number][] {
  const names = EXPORT_SCHEMA.map((c) => c.name as string);
  if (format === "jsonl") {
    const out: [Raw, number][] = [];
    text.split("\n").forEach((l, i) => {
      if (l.trim() === "") return;
      let v: unknown;
      try {
        v = JSON.parse(l);
      } catch (e) {
        throw new ImportError(file, `not valid JSON (${(e as Error).message})`, i + 1);
      }
      if (typeof v !== "object" || v === null || Array.isArray(v)) {
        throw new ImportError(file, "expected a JSON object", i + 1);
      }
      out.push([v as Raw, i + 1]);
    });
    return out;
  }
  let records: CSVRecord[];
  try {
    records = parseCSV(text);
  } catch (e) {
    throw new ImportError(file, `malformed CSV: ${(e as Error).message}`);
  }
  if (records.length === 0) throw new ImportError(file, "empty file: no header line");
  const header = records[0].fields.map((f) => f.text);
  const missing = names.filter((n) => !header.includes(n) && !ADDED_EXPORT_COLUMNS.has(n));
  if (missing.length > 0) {
    throw new ImportError(file, `the header lacks column(s) ${missing.join(", ")}`, 1);
  }
  const types = new Map(EXPORT_SCHEMA.map((c) => [c.name as string, c.type]));
  return records.slice(1).map((r) => {
    if (r.fields.length !== header.length) {
      throw new ImportError(
        file,
        `${r.fields.length} fields, but the header has ${header.length}`,
        r.line,
      );
    }
    const raw: Raw = {};
    header.forEach((name, i) => {
      const f = r.fields[i];
      if (!f.quoted && f.text === "") raw[name] = null;
      else if (types.get(name) === "integer" || types.get(name) === "number") {
        const x = Number(f.text);
        raw[name] = f.text.trim() === "" || Number.isNaN(x) ? f.text : x;
      } else raw[name] = f.text;
    });
    return [raw, r.line];
  });
}

/** Checks a raw row against the schema; returns it typed. */
function checkRow(raw: Raw, file: string, line: number): ExportRow {
  for (const c of EXPORT_SCHEMA) {
    const v = raw[c.name];
    const where = `column "${c.name}"`;
    if (v === null || v === undefined) {
      if (!c.nullable) throw new ImportError(file, `${where} is missing or null`, line);
      raw[c.name] = null;
      continue;
    }
    if (c.type === "integer" || c.type === "number") {
      if (typeof v !== "number" || !Number.isFinite(v)) {
        throw new ImportError(file, `${where} must be a number, got ${JSON.stringify(v)}`, line);
      }
      if (c.type === "integer" && !Number.isInteger(v)) {
        throw new ImportError(file, `${where} must be an integer, got ${v}`, line);
      }
    } else if (typeof v !== "string") {
      throw new ImportError(file, `${where} must be a string, got ${JSON.stringify(v)}`, line);
    } else if (c.type === "json") {
      try {
        JSON.parse(v);
      } catch (e) {
        throw new ImportError(file, `${where} is not valid JSON (${(e as Error).message})`, line);
      }
    }
  }
  const row = raw as unknown as ExportRow;
  if (row.trial < 1) {
    throw new ImportError(
      file,
      `column "trial" must be an integer >= 1 (exports number trials from 1), got ${row.trial}`,
      line,
    );
  }
  if (!ERROR_KIND_SET.has(row.error_kind)) {
    throw new ImportError(
      file,
      `column "error_kind": unknown kind ${JSON.stringify(row.error_kind)}; known: ${
        ERROR_KINDS.join(", ")
      }`,
      line,
    );
  }
  const times = JSON.parse(row.times);
  if (!Array.isArray(times) || !times.every((t) => typeof t === "number")) {
    throw new ImportError(file, `column "times" must be a JSON list of numbers`, line);
  }
  const shape = JSON.parse(row.shape);
  if (!Array.isArray(shape) || !shape.every((d) => typeof d === "number")) {
    throw new ImportError(file, `column "shape" must be a JSON list of numbers`, line);
  }
  if (row.knobs !== null) {
    const k = JSON.parse(row.knobs);
    if (!Array.isArray(k) || !k.every((x) => Number.isInteger(x))) {
      throw new ImportError(file, `column "knobs" must be a JSON list of integers or null`, line);
    }
  }
  for (const name of ["run_config", "machine"] as const) {
    const v = JSON.parse(row[name]);
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      throw new ImportError(file, `column "${name}" must be a JSON object`, line);
    }
  }
  if (Number.isNaN(Date.parse(row.timestamp))) {
    throw new ImportError(file, `column "timestamp" is not a date: ${row.timestamp}`, line);
  }
  return row;
}

/** Columns that must agree on every row of one run. */
const RUN_COLUMNS = [
  "workload",
  "shape",
  "flops",
  "target",
  "strategy",
  "seed",
  "run_config",
  "machine",
  "compiler",
  "tunebook_version",
] as const;

interface Patch {
  id: number;
  timestamp?: string;
  nullGflops: boolean;
}

/**
 * Imports a CSV or JSON Lines export (see `export.ts`) into `db`: a new
 * finished run per exported run, in the order the runs first appear.
 * Nothing is written unless the whole file checks out.
 *
 * @param db the records database to add to
 * @param path the export file
 * @param format `csv` or `jsonl` (default: from the extension, `.csv` or else JSON Lines)
 * @throws {ImportError} naming the file, line and column of a bad row
 */
export async function importRecords(
  db: RecordsDB,
  path: string,
  format?: "csv" | "jsonl",
): Promise<ImportSummary> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw new ImportError(path, `cannot read the file (${(e as Error).message})`, undefined, {
      cause: e,
    });
  }
  const fmt = format ?? (path.toLowerCase().endsWith(".csv") ? "csv" : "jsonl");
  const rows = readRows(text, fmt, path).map(([raw, line]) => ({
    row: checkRow(raw, path, line),
    line,
  }));
  const groups = new Map<number, { row: ExportRow; line: number }[]>();
  for (const r of rows) {
    const g = groups.get(r.row.run_id);
    if (!g) groups.set(r.row.run_id, [r]);
    else {
      const first = g[0].row;
      for (const c of RUN_COLUMNS) {
        if (r.row[c] !== first[c]) {
          throw new ImportError(
            path,
            `column "${c}" differs from the first row of run ${r.row.run_id} (line ${g[0].line})`,
            r.line,
          );
        }
      }
      g.push(r);
    }
  }
  const runIds = new Map<number, number>();
  const patches: Patch[] = [];
  for (const [oldId, group] of groups) {
    const first = group[0].row;
    const config = JSON.parse(first.run_config);
    const workloadId = db.upsertWorkload({
      name: first.workload,
      shape: JSON.parse(first.shape),
      flops: first.flops,
    });
    const runId = db.startRun({
      strategy: first.strategy,
      seed: first.seed,
      trials: Number.isInteger(config.trials) ? config.trials : group.length,
      target: first.target,
      workloadId,
      config,
      machine: JSON.parse(first.machine),
      compiler: first.compiler,
      tunebookVersion: first.tunebook_version,
    });
    runIds.set(oldId, runId);
    for (const { row, line } of group) {
      try {
        const cid = db.addCandidate(runId, {
          // Exports number trials from 1; the database stores them from 0.
          trial: row.trial - 1,
          trace: row.trace,
          traceHash: row.trace_hash,
          knobs: row.knobs === null ? undefined : JSON.parse(row.knobs),
        });
        const id = db.addResult(cid, {
          errorKind: row.error_kind as ErrorKind,
          error: row.error ?? undefined,
          times: JSON.parse(row.times),
          buildSeconds: row.build_seconds,
          runSeconds: row.run_seconds,
          ...optionalParts({
            verifySeconds: row.verify_seconds ?? undefined,
            strategySeconds: row.strategy_seconds ?? undefined,
            frameworkSeconds: row.framework_seconds ?? undefined,
          }, {
            load1: row.load1 ?? undefined,
            steal: row.steal ?? undefined,
            cpuMhz: row.cpu_mhz ?? undefined,
            probeGBps: row.probe_gbps ?? undefined,
          }),
        });
        patches.push({ id, timestamp: row.timestamp, nullGflops: row.flops === 0 });
      } catch (e) {
        throw new ImportError(path, (e as Error).message, line, { cause: e });
      }
    }
    db.finishRun(runId);
  }
  const preserved = patchResults(db, patches);
  return { runs: groups.size, rows: rows.length, runIds, preserved };
}

/**
 * Sets recorded timestamps and null gflops on results through a second
 * connection (the records API stamps results with the current time).
 *
 * @returns false for an in-memory database, which cannot be reached
 */
function patchResults(db: RecordsDB, patches: readonly Patch[]): boolean {
  if (db.path === ":memory:" || db.path === "") return false;
  if (patches.length === 0) return true;
  const side = new DatabaseSync(db.path);
  try {
    side.exec("PRAGMA busy_timeout = 5000");
    const ts = side.prepare("UPDATE results SET timestamp = ? WHERE id = ?");
    const gf = side.prepare("UPDATE results SET gflops = NULL WHERE id = ?");
    side.exec("BEGIN IMMEDIATE");
    try {
      for (const p of patches) {
        if (p.timestamp !== undefined) ts.run(p.timestamp, p.id);
        if (p.nullGflops) gf.run(p.id);
      }
      side.exec("COMMIT");
    } catch (e) {
      side.exec("ROLLBACK");
      throw e;
    }
  } finally {
    side.close();
  }
  return true;
}

// ---------------------------------------------------------------------------
// Kernel Tuner caches

/** Error kind of each Kernel Tuner error marker; any other marker is `unknown`. */
export const KERNELTUNER_ERROR_KINDS: Readonly<Record<string, ErrorKind>> = Object.freeze({
  InvalidConfig: "instantiation_error",
  CompilationFailedConfig: "compile_host",
  RuntimeFailedConfig: "runtime_error",
});

/** Options of {@link importKernelTunerCache}. */
export interface KernelTunerImportOptions {
  /**
   * Flops of one kernel call, for gflops. Default: derived from the entries'
   * `GFLOP/s` and `time` when they have them (median over valid entries),
   * else 0 (unknown: gflops null).
   */
  flops?: number;
}

function finite(x: unknown): number | undefined {
  return typeof x === "number" && Number.isFinite(x) ? x : undefined;
}

/** Milliseconds of a cache field as seconds, when it is a non-negative number. */
function msToSeconds(x: unknown): number | undefined {
  const ms = finite(x);
  return ms !== undefined && ms >= 0 ? ms / 1000 : undefined;
}

/** ISO time of a Kernel Tuner timestamp such as `2023-01-26 01:05:09.730633+00:00`. */
function isoTime(x: unknown): string | undefined {
  if (typeof x !== "string") return undefined;
  const m = x.trim().replace(" ", "T").replace(/(\.\d{3})\d+/, "$1");
  const t = Date.parse(m);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Imports a Kernel Tuner cache file (`.json` or `.json.gz`, validated as
 * {@link validateCache} does) as one finished run:
 *
 * - workload: name = `kernel_name`, shape = `problem_size` (numbers; a
 *   non-numeric problem size gives shape `[]`), flops per the options;
 * - run: strategy `kerneltuner-cache`, seed 0, target
 *   `kerneltuner:<device>`, machine `{device, deviceName, source}`, config
 *   with the file name, kernel, problem size, objective and `knobSpace` (one
 *   `other` knob per tuning parameter with its values, so exports can name
 *   the knobs);
 * - per configuration, in cache order (trial = position): knobs = option
 *   index per parameter, trace = canonical JSON `{"kerneltuner": {param:
 *   value, …}}` (not a tunebook trace, so it has no features), trace hash =
 *   its SHA-256, times = the cache's `times` (or `[time]`) in seconds, error
 *   kind from the marker ({@link KERNELTUNER_ERROR_KINDS}) with the marker
 *   as message and no times, build seconds from `compile_time`, run seconds
 *   from `benchmark_time` + `verification_time` (0 when absent), verification,
 *   strategy and framework seconds from `verification_time`, `strategy_time`
 *   and `framework_time` when the entry has them, and the entry's `timestamp`
 *   when it has one.
 *
 * @param db the records database to add to
 * @param path the cache file
 * @param options flops of one call
 * @throws {KernelTunerError} naming the file and field when the file is unreadable or malformed
 */
export async function importKernelTunerCache(
  db: RecordsDB,
  path: string,
  options: KernelTunerImportOptions = {},
): Promise<KernelTunerImportSummary> {
  const data = await readKernelTunerJSON(path);
  const cache: KernelTunerCache = validateCache(data, path);
  const rawCache = (data as { cache: Record<string, Record<string, unknown>> }).cache;
  const keys = cache.tuneParamsKeys;
  const ps = Array.isArray(cache.problemSize) ? cache.problemSize : [cache.problemSize];
  const numeric = ps.map((d) => (typeof d === "number" ? d : Number(d)));
  const shape = numeric.every((d) => Number.isFinite(d)) ? numeric : [];
  let flops = options.flops;
  if (flops === undefined) {
    const derived: number[] = [];
    for (const e of Object.values(rawCache)) {
      const g = finite(e["GFLOP/s"]), t = finite(e.time);
      if (g !== undefined && t !== undefined && g > 0 && t > 0) derived.push(g * 1e9 * t / 1000);
    }
    flops = derived.length > 0 ? Math.round(median(derived)) : 0;
  }
  if (!(Number.isFinite(flops) && flops >= 0)) {
    throw new KernelTunerError(`flops must be a number >= 0, got ${flops}`, { file: path });
  }
  const device = deviceOf(cache);
  const workloadId = db.upsertWorkload({ name: cache.kernelName, shape, flops });
  const runId = db.startRun({
    strategy: "kerneltuner-cache",
    seed: 0,
    trials: cache.cache.size,
    target: `kerneltuner:${device}`,
    workloadId,
    config: {
      source: basename(path),
      kernelName: cache.kernelName,
      problemSize: cache.problemSize,
      objective: cache.objective,
      knobSpace: keys.map((k) => ({ name: k, kind: "other", options: cache.tuneParams[k] })),
    },
    machine: { device, deviceName: cache.deviceName, source: "Kernel Tuner cache" },
    compiler: "unknown (Kernel Tuner cache)",
    tunebookVersion: await tunebookVersion(),
  });
  const patches: Patch[] = [];
  let trial = 0, errors = 0;
  for (const [key, entry] of cache.cache) {
    const parts = key.split(",");
    const values: Record<string, unknown> = {};
    const knobs: number[] = [];
    keys.forEach((k, i) => {
      const opts = cache.tuneParams[k];
      const at = opts.findIndex((v) => String(v) === parts[i]);
      knobs.push(at);
      values[k] = at >= 0 ? opts[at] : parts[i];
    });
    const trace = canonicalJSON({ kerneltuner: values });
    const cid = db.addCandidate(runId, {
      trial: trial++,
      trace,
      traceHash: await sha256(trace),
      knobs: knobs.every((x) => x >= 0) ? knobs : undefined,
    });
    const raw = rawCache[key] ?? {};
    // A time of 0 ms is not a measurement: recorded as invalid, as replay treats it.
    const zero = typeof entry.time === "number" && entry.time <= 0;
    const failed = typeof entry.time === "string" || zero;
    if (failed) errors++;
    const ms = failed ? [] : (entry.times?.length ? entry.times : [entry.time as number]);
    const id = db.addResult(cid, {
      errorKind: zero
        ? "runtime_error"
        : failed
        ? KERNELTUNER_ERROR_KINDS[entry.time as string] ?? "unknown"
        : "none",
      error: zero
        ? `time ${entry.time} ms is not positive`
        : failed
        ? (entry.time as string)
        : undefined,
      times: ms.map((t) => t / 1000),
      buildSeconds: (finite(raw.compile_time) ?? 0) / 1000,
      // Run seconds hold the output check, as a live result's do.
      runSeconds: ((finite(raw.benchmark_time) ?? 0) + (finite(raw.verification_time) ?? 0)) / 1000,
      ...optionalParts({
        verifySeconds: msToSeconds(raw.verification_time),
        strategySeconds: msToSeconds(raw.strategy_time),
        frameworkSeconds: msToSeconds(raw.framework_time),
      }, {}),
    });
    patches.push({ id, timestamp: isoTime(raw.timestamp), nullGflops: flops === 0 });
  }
  db.finishRun(runId);
  const preserved = patchResults(db, patches);
  return {
    runId,
    rows: trial,
    errors,
    workloadKey: `${cache.kernelName}:${shape.join(",")}`,
    flops,
    preserved,
  };
}
