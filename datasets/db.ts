/**
 * The records database: every tuning run, every candidate it proposed and
 * every measurement, in one SQLite file (`node:sqlite`).
 *
 * The database runs in WAL mode and every write is committed before the
 * method returns (autocommit, or a short `BEGIN IMMEDIATE` transaction when a
 * write takes several statements), so a process killed at any moment loses no
 * record whose write call had returned.
 *
 * @module
 */

import { median } from "../ir/stats.ts";
import { checkObject, checkString } from "../ir/check.ts";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { closeSync, mkdirSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ERROR_KINDS, type ErrorKind, isTransient } from "../ir/error_kind.ts";
import type { MeasureConditions } from "../ir/conditions.ts";
import {
  APPLICATION_ID,
  classify,
  explain,
  fileSize,
  isSqliteFile,
  openReadOnly,
} from "./_db_file.ts";

export { APPLICATION_ID, isSqliteFile };

export type { ErrorKind, MeasureConditions };

/** Schema version stored in `PRAGMA user_version` by this build. */
export const SCHEMA_VERSION = 1;

/**
 * How {@link RecordsDB.open} treats the file: `"create"` (default) creates a
 * missing or empty file; `"write"` needs an existing records database and
 * writes to it (`tune --resume`, `reproduce`); `"read"` needs one and opens it
 * read-only (`export`, `report`, `costmodel-eval`): nothing is ever written.
 */
export type OpenMode = "create" | "write" | "read";

/** Milliseconds SQLite waits for a lock held by another connection. */
const BUSY_TIMEOUT_MS = 5000;

/** Error raised when the records database cannot be opened, created or used. */
export class DatabaseError extends Error {
  /** Path of the database file the error is about. */
  readonly path: string;

  /**
   * Creates an error about the database at `path`.
   *
   * @param path path of the database file
   * @param message full message (should name the path)
   * @param options standard error options (`cause`)
   */
  constructor(path: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DatabaseError";
    this.path = path;
  }
}

/** A workload as given to {@link RecordsDB.upsertWorkload}. */
export interface WorkloadInput {
  /** Operator name, e.g. `"matmul"`. */
  name: string;
  /** Problem shape, e.g. `[512, 512, 512]`. */
  shape: number[];
  /** Floating-point operations of one call (for GFLOP/s). */
  flops: number;
}

/** A stored workload. */
export interface WorkloadRow extends WorkloadInput {
  /** Row id. */
  id: number;
  /** `name:shape` key, e.g. `"matmul:512,512,512"`. */
  key: string;
}

/** What is recorded when a tuning run starts. */
export interface RunInfo {
  /** Search strategy name, e.g. `"random"` or `"evolutionary"`. */
  strategy: string;
  /** Seed of the search. */
  seed: number;
  /** Trial budget of the run. */
  trials: number;
  /** Target description, e.g. `"llvm -mcpu=native"` or `"c-omp"`. */
  target: string;
  /** Id returned by {@link RecordsDB.upsertWorkload}. */
  workloadId: number;
  /** Strategy configuration, CLI arguments (stored as JSON). */
  config: Record<string, unknown>;
  /** Machine description: CPU, cores, OS... (stored as JSON). */
  machine: Record<string, unknown>;
  /** Compiler identification, e.g. `"gcc (Debian 12.2.0-14) 12.2.0"`. */
  compiler: string;
  /** Version of tunebook that made the run. */
  tunebookVersion: string;
}

/** Status of a run: `"running"` until {@link RecordsDB.finishRun}. */
export type RunStatus = "running" | "finished";

/** A stored run. */
export interface RunRow extends RunInfo {
  /** Run id. */
  id: number;
  /** ISO time the run started. */
  created: string;
  /** ISO time the run finished, null while running. */
  finished: string | null;
  /** `"running"` until {@link RecordsDB.finishRun}. */
  status: RunStatus;
}

/** A candidate as given to {@link RecordsDB.addCandidate}. */
export interface CandidateInput {
  /** Trial number within the run. */
  trial: number;
  /** Serialized (JSON) schedule trace; stored and returned as given. */
  trace: string;
  /** Hash of the trace; unique within a run. */
  traceHash: string;
  /** Knob vector of the candidate, when the strategy has one. */
  knobs?: number[];
}

/** A measurement as given to {@link RecordsDB.addResult}. */
export interface ResultInput {
  /** Why the candidate failed; `"none"` when the candidate built, ran and matched the reference. */
  errorKind: ErrorKind;
  /** Failure message. */
  error?: string;
  /** Seconds per call, one per repeat. */
  times: number[];
  /** Wall seconds spent building. */
  buildSeconds: number;
  /** Wall seconds spent measuring. */
  runSeconds: number;
  /** See {@link ResultTimeParts.verifySeconds}; absent: not recorded. */
  verifySeconds?: number;
  /** See {@link ResultTimeParts.strategySeconds}. */
  strategySeconds?: number;
  /** See {@link ResultTimeParts.frameworkSeconds}. */
  frameworkSeconds?: number;
  /** The machine's conditions during the measurement. */
  conditions?: MeasureConditions;
}

/**
 * The parts of a live result's time beyond build and run seconds, as Kernel
 * Tuner's caches record them (verification_time, strategy_time,
 * framework_time). Each is absent when it was not recorded: results of
 * earlier versions, replays, imports without the field.
 */
export interface ResultTimeParts {
  /** Of `runSeconds`, the seconds spent checking the output against the reference. */
  verifySeconds?: number;
  /** The strategy's seconds for proposing the candidate: its share of its round's propose + observe. */
  strategySeconds?: number;
  /**
   * The rest of the loop's wall time since the previous result was recorded
   * (keys, records, the measurer's queueing), beyond this result's build, run
   * and strategy seconds; at least 0.
   */
  frameworkSeconds?: number;
}

/** A stored measurement. */
export interface ResultRow {
  /** Result id. */
  id: number;
  /** Id of the measured candidate. */
  candidateId: number;
  /** Why the candidate failed; `"none"` when it was measured and correct. */
  errorKind: ErrorKind;
  /** Failure message, null when there is none. */
  error: string | null;
  /** Seconds per call, one per repeat. */
  times: number[];
  /** Median of `times`; null on error. */
  seconds: number | null;
  /** Workload flops / `seconds` / 1e9; null on error. */
  gflops: number | null;
  /** Wall seconds spent building. */
  buildSeconds: number;
  /** Wall seconds spent measuring. */
  runSeconds: number;
  /** See {@link ResultTimeParts.verifySeconds}; absent when not recorded. */
  verifySeconds?: number;
  /** See {@link ResultTimeParts.strategySeconds}; absent when not recorded. */
  strategySeconds?: number;
  /** See {@link ResultTimeParts.frameworkSeconds}; absent when not recorded. */
  frameworkSeconds?: number;
  /** The machine's conditions during the measurement; absent when none were recorded. */
  conditions?: MeasureConditions;
  /** ISO time the result was recorded. */
  timestamp: string;
}

/** A stored candidate with its measurement, if any. */
export interface CandidateRow {
  /** Candidate id. */
  id: number;
  /** Id of the run that proposed it. */
  runId: number;
  /** Trial number within the run. */
  trial: number;
  /** Serialized trace, as given to {@link RecordsDB.addCandidate}. */
  trace: string;
  /** Hash of the trace; unique within a run. */
  traceHash: string;
  /** Knob vector, null when none was given. */
  knobs: number[] | null;
  /** ISO time the candidate was recorded. */
  created: string;
  /** The measurement, or null if the candidate was never measured. */
  result: ResultRow | null;
}

/** Measurement counts of a run. */
export interface RunCounts {
  /** Candidates with a result. */
  measured: number;
  /** Results with error kind `"none"`. */
  valid: number;
  /** Results with any other error kind. */
  errors: number;
}

/** Median of a non-empty list (ir/stats.ts, re-exported where the records use it). */
export { median };

/** Key of a workload in the `workloads` table: `name:d0,d1,...`. */
export function workloadKey(name: string, shape: readonly number[]): string {
  return `${name}:${shape.join(",")}`;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS workloads (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  shape TEXT NOT NULL,
  key TEXT NOT NULL UNIQUE,
  flops REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  created TEXT NOT NULL,
  finished TEXT,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished')),
  strategy TEXT NOT NULL,
  seed INTEGER NOT NULL,
  trials INTEGER NOT NULL,
  target TEXT NOT NULL,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  config TEXT NOT NULL,
  machine TEXT NOT NULL,
  compiler TEXT NOT NULL,
  tunebook_version TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status);
CREATE TABLE IF NOT EXISTS candidates (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  trial INTEGER NOT NULL,
  trace TEXT NOT NULL,
  trace_hash TEXT NOT NULL,
  knobs TEXT,
  created TEXT NOT NULL,
  UNIQUE (run_id, trace_hash)
);
CREATE INDEX IF NOT EXISTS candidates_run_trial ON candidates(run_id, trial);
CREATE TABLE IF NOT EXISTS results (
  id INTEGER PRIMARY KEY,
  candidate_id INTEGER NOT NULL UNIQUE REFERENCES candidates(id),
  error_kind TEXT NOT NULL,
  error TEXT,
  times TEXT NOT NULL,
  seconds REAL,
  gflops REAL,
  build_seconds REAL NOT NULL,
  run_seconds REAL NOT NULL,
  timestamp TEXT NOT NULL
);
`;

type Row = Record<string, SQLInputValue>;

/**
 * Columns of `results` added after schema version 1 (nullable: a result of
 * an earlier version reads them as absent). Opening a database to write adds
 * the missing ones (`ALTER TABLE ADD COLUMN`); a database opened read-only
 * reads the missing ones as NULL. The schema version stays 1: an older
 * tunebook still reads and writes these files (it leaves the columns NULL).
 */
const ADDED_RESULT_COLUMNS = [
  "verify_seconds",
  "strategy_seconds",
  "framework_seconds",
  "load1",
  "steal",
  "cpu_mhz",
  "probe_gbps",
] as const;

/** The result columns of a SELECT, with NULL for the added columns the file lacks. */
function resultColumns(has: ReadonlySet<string>): string {
  return `r.id AS r_id, r.candidate_id AS r_candidate_id, r.error_kind AS r_error_kind,
  r.error AS r_error, r.times AS r_times, r.seconds AS r_seconds, r.gflops AS r_gflops,
  r.build_seconds AS r_build_seconds, r.run_seconds AS r_run_seconds, r.timestamp AS r_timestamp, ${
    ADDED_RESULT_COLUMNS.map((c) => has.has(c) ? `r.${c} AS r_${c}` : `NULL AS r_${c}`).join(", ")
  }`;
}

/** A finite number, or null (never a guess) for a column. */
function finiteOrNull(x: number | undefined): number | null {
  return typeof x === "number" && Number.isFinite(x) ? x : null;
}

/** A nullable REAL column as an optional number. */
function optional(v: SQLInputValue | undefined): number | undefined {
  return v === null || v === undefined ? undefined : Number(v);
}

const CANDIDATE_COLUMNS = `c.id, c.run_id, c.trial, c.trace, c.trace_hash, c.knobs, c.created`;

const ERROR_KIND_SET: ReadonlySet<string> = new Set(ERROR_KINDS);

function now(): string {
  return new Date().toISOString();
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The nearest existing ancestor of `dir` (or `dir` itself) if it is not a directory. */
function fileInTheWay(dir: string): string | undefined {
  for (let d = dir; d !== dirname(d); d = dirname(d)) {
    try {
      return statSync(d).isDirectory() ? undefined : d;
    } catch { /* missing: look higher */ }
  }
  return undefined;
}

/** Creates the parent directory of `path`, explaining a failure in plain words. */
/**
 * Removes the files of a database that {@link RecordsDB.open} began to create
 * and could not: only when the file is still empty or carries tunebook's mark
 * (a file another program made meanwhile stays as it is).
 */
function removeNew(path: string): void {
  let ours = false;
  try {
    const fd = openSync(path, "r");
    const head = new Uint8Array(72);
    let n = 0;
    try {
      n = readSync(fd, head, 0, 72, 0);
    } finally {
      closeSync(fd);
    }
    ours = n === 0 || (n === 72 && new DataView(head.buffer).getUint32(68) === APPLICATION_ID);
  } catch {
    ours = false; // nothing there, or unreadable: left alone
  }
  if (!ours) return;
  for (const p of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    try {
      rmSync(p, { force: true });
    } catch { /* nothing there, or nothing to do */ }
  }
}

function makeParent(path: string): void {
  const dir = dirname(resolve(path));
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    const blocker = fileInTheWay(dir);
    const why = blocker === undefined ? reason(e) : `"${blocker}" is not a directory`;
    throw new Error(`cannot create directory "${dir}": ${why}`, { cause: e });
  }
}

/** Parses a JSON column; a garbled value is a {@link DatabaseError} naming the field. */
function parseColumn(path: string, table: string, id: unknown, column: string, text: unknown) {
  try {
    return JSON.parse(text as string);
  } catch {
    throw new DatabaseError(
      path,
      `Records database "${path}": ${table} ${id}: field ${column} is not valid JSON`,
    );
  }
}

function toRun(path: string, r: Row): RunRow {
  const json = (column: string) => parseColumn(path, "run", r.id, column, r[column]);
  return {
    id: Number(r.id),
    created: r.created as string,
    finished: (r.finished as string | null) ?? null,
    status: r.status as RunStatus,
    strategy: r.strategy as string,
    seed: Number(r.seed),
    trials: Number(r.trials),
    target: r.target as string,
    workloadId: Number(r.workload_id),
    config: json("config"),
    machine: json("machine"),
    compiler: r.compiler as string,
    tunebookVersion: r.tunebook_version as string,
  };
}

function toResult(path: string, r: Row): ResultRow | null {
  if (r.r_id === null || r.r_id === undefined) return null;
  return {
    id: Number(r.r_id),
    candidateId: Number(r.r_candidate_id),
    errorKind: r.r_error_kind as ErrorKind,
    error: (r.r_error as string | null) ?? null,
    times: parseColumn(path, "result", r.r_id, "times", r.r_times),
    seconds: (r.r_seconds as number | null) ?? null,
    gflops: (r.r_gflops as number | null) ?? null,
    buildSeconds: Number(r.r_build_seconds),
    runSeconds: Number(r.r_run_seconds),
    ...optionalParts({
      verifySeconds: optional(r.r_verify_seconds),
      strategySeconds: optional(r.r_strategy_seconds),
      frameworkSeconds: optional(r.r_framework_seconds),
    }, {
      load1: optional(r.r_load1),
      steal: optional(r.r_steal),
      cpuMhz: optional(r.r_cpu_mhz),
      probeGBps: optional(r.r_probe_gbps),
    }),
    timestamp: r.r_timestamp as string,
  };
}

/**
 * The time parts and conditions of a result with the absent ones left out
 * (no `conditions` at all when none is known): how every store builds a
 * {@link ResultRow} from nullable columns.
 *
 * @example
 * ```ts
 * import { optionalParts } from "./db.ts";
 * const p = optionalParts({ verifySeconds: 0.1, strategySeconds: undefined }, { load1: undefined });
 * if (JSON.stringify(p) !== '{"verifySeconds":0.1}') throw new Error(JSON.stringify(p));
 * ```
 */
export function optionalParts(
  parts: { [K in keyof ResultTimeParts]: number | undefined },
  conditions: { [K in keyof MeasureConditions]: number | undefined },
): ResultTimeParts & { conditions?: MeasureConditions } {
  const out: ResultTimeParts & { conditions?: MeasureConditions } = {};
  for (const [k, v] of Object.entries(parts)) {
    if (typeof v === "number" && Number.isFinite(v)) out[k as keyof ResultTimeParts] = v;
  }
  const c: MeasureConditions = {};
  for (const [k, v] of Object.entries(conditions)) {
    if (typeof v === "number" && Number.isFinite(v)) c[k as keyof MeasureConditions] = v;
  }
  if (Object.keys(c).length > 0) out.conditions = c;
  return out;
}

function toCandidate(path: string, r: Row): CandidateRow {
  return {
    id: Number(r.id),
    runId: Number(r.run_id),
    trial: Number(r.trial),
    trace: r.trace as string,
    traceHash: r.trace_hash as string,
    knobs: r.knobs === null || r.knobs === undefined
      ? null
      : parseColumn(path, "candidate", r.id, "knobs", r.knobs),
    created: r.created as string,
    result: toResult(path, r),
  };
}

/**
 * Records of tuning runs in a SQLite file.
 *
 * @example
 * ```ts
 * import { RecordsDB } from "./db.ts";
 * const db = RecordsDB.open(":memory:");
 * const wl = db.upsertWorkload({ name: "matmul", shape: [64, 64, 64], flops: 2 * 64 ** 3 });
 * const run = db.startRun({
 *   workloadId: wl,
 *   strategy: "random",
 *   seed: 1,
 *   trials: 1,
 *   target: "cpu",
 *   config: {},
 *   machine: {},
 *   compiler: "gcc",
 *   tunebookVersion: "0.1.0",
 * });
 * const cand = db.addCandidate(run, { trial: 0, trace: "{}", traceHash: "h0" });
 * db.addResult(cand, { errorKind: "none", times: [1e-4], buildSeconds: 0.2, runSeconds: 0.01 });
 * db.finishRun(run);
 * if (db.best(run)?.result.seconds !== 1e-4) throw new Error();
 * db.close();
 * ```
 */
export class RecordsDB {
  /** Path the database was opened from. */
  readonly path: string;
  #db: DatabaseSync;
  #statements = new Map<string, StatementSync>();
  #closed = false;
  /** The SELECT list of result columns for this file (see ADDED_RESULT_COLUMNS). */
  #resultColumns = resultColumns(new Set());

  private constructor(path: string, db: DatabaseSync) {
    this.path = path;
    this.#db = db;
  }

  /**
   * Opens the records database at `path`. `":memory:"` opens a private
   * in-memory db. In mode `"create"` (the default) a missing file is created
   * with its parent directory. A file that is not a tunebook records database
   * (another program's SQLite file, or any other non-empty file) is refused
   * before anything is written to it: it stays byte for byte as it was.
   *
   * @throws {DatabaseError} when the file is missing (modes `"write"` and
   * `"read"`), cannot be opened or written, is not a records database, or was
   * written by a newer schema version.
   */
  static open(path: string, options: { mode?: OpenMode } = {}): RecordsDB {
    checkString(path, "path", {
      what: 'a records database path (or ":memory:")',
      allowEmpty: true,
    });
    checkObject(options, "RecordsDB.open options");
    const mode = options.mode ?? "create";
    const fail = (why: string, cause?: unknown): never => {
      throw new DatabaseError(path, `Cannot open records database "${path}": ${why}`, { cause });
    };
    const memory = path === ":memory:";
    const size = memory ? 0 : fileSize(path, fail);
    if (size === undefined && mode !== "create") fail("no such file");
    if (size === 0 && mode !== "create") fail("the file is empty, not a records database");
    if (size !== undefined && size > 0 && !isSqliteFile(path)) {
      fail("it is not an SQLite database (tunebook writes only to its own records databases)");
    }
    if (size !== undefined && size > 0) {
      // A read-only look first: even a foreign file with a hot journal stays untouched.
      let probe: DatabaseSync | undefined;
      try {
        probe = mode === "read"
          ? openReadOnly(path, BUSY_TIMEOUT_MS)
          : new DatabaseSync(path, { readOnly: true });
        probe.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
        const kind = classify(probe, { emptyOk: false });
        if (kind.foreign) fail(kind.foreign);
      } catch (e) {
        if (e instanceof DatabaseError) throw e;
        fail(explain(e, path), e);
      } finally {
        try {
          probe?.close();
        } catch { /* already failing */ }
      }
    }
    let db: DatabaseSync | undefined;
    try {
      if (!memory && mode === "create") makeParent(path);
      db = mode === "read"
        ? openReadOnly(path, BUSY_TIMEOUT_MS)
        : new DatabaseSync(path, { enableForeignKeyConstraints: true });
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.exec("PRAGMA foreign_keys = ON");
    } catch (e) {
      try {
        db?.close();
      } catch { /* already failing */ }
      if (size === undefined && !memory) removeNew(path);
      return fail(explain(e, path), e);
    }
    const records = new RecordsDB(path, db);
    try {
      if (mode === "read") records.#checkVersion(records.#version());
      else {
        // A command that writes checks the file first: nothing is appended to a damaged one.
        if (size !== undefined && size > 0) records.#quickCheck();
        records.#migrate(memory);
      }
      records.#resultColumns = resultColumns(records.#columns("results"));
    } catch (e) {
      records.close();
      // A database this call began to create (a full disk, read-only media) is not left behind.
      if (size === undefined && !memory) removeNew(path);
      if (e instanceof DatabaseError) throw e;
      return fail(explain(e, path), e);
    }
    return records;
  }

  /**
   * `PRAGMA quick_check(1)`: every page of the file read once (about a
   * second a gigabyte), without the index cross-checks of `integrity_check`.
   */
  #quickCheck(): void {
    const row = this.#get("PRAGMA quick_check(1)");
    const verdict = String(Object.values(row ?? {})[0] ?? "no answer");
    if (verdict !== "ok") {
      throw new DatabaseError(
        this.path,
        `Cannot open records database "${this.path}": the file is damaged (quick_check: ${verdict}); ` +
          `nothing was written to it`,
      );
    }
  }

  /** Names of the columns of `table` in this file. */
  #columns(table: string): Set<string> {
    const rows = this.#sql(() => this.#db.prepare(`PRAGMA table_info(${table})`).all() as Row[]);
    return new Set(rows.map((r) => String(r.name)));
  }

  #version(): number {
    return Number(this.#get("PRAGMA user_version")?.user_version ?? 0);
  }

  #checkVersion(v: number): void {
    if (v > SCHEMA_VERSION) {
      throw new DatabaseError(
        this.path,
        `Cannot open records database "${this.path}": it has schema version ${v}, ` +
          `newer than the version ${SCHEMA_VERSION} this tunebook supports; ` +
          `upgrade tunebook or use another database file`,
      );
    }
  }

  /**
   * Marks and creates the schema of a new database, marks an unmarked one of
   * an earlier version, and switches to WAL; each only after checking, inside
   * the write transaction, that the file is a records database or empty.
   */
  #migrate(memory: boolean): void {
    this.#checkVersion(this.#version());
    // BEGIN IMMEDIATE also proves the file is writable, even when the schema exists.
    this.#transaction(() => {
      // The probe in open() refused a non-empty foreign file; this catches one made meanwhile.
      const kind = classify(this.#db, { emptyOk: true });
      if (kind.foreign) {
        throw new DatabaseError(
          this.path,
          `Cannot open records database "${this.path}": ${kind.foreign}`,
        );
      }
      const v = this.#version();
      this.#checkVersion(v);
      if (!kind.marked) this.#db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
      if (v < SCHEMA_VERSION) {
        this.#db.exec(SCHEMA);
        this.#db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
      }
      const has = this.#columns("results");
      for (const c of ADDED_RESULT_COLUMNS) {
        if (!has.has(c)) this.#db.exec(`ALTER TABLE results ADD COLUMN ${c} REAL`);
      }
    });
    if (!memory) this.#db.prepare("PRAGMA journal_mode = WAL").get();
    // WAL + NORMAL: a committed transaction survives the process being
    // killed (it is in the OS once COMMIT returns); only power loss can
    // drop the last commits, and never corrupts the file.
    this.#db.exec("PRAGMA synchronous = NORMAL");
  }

  /** Closes the database; further calls throw. Closing twice is harmless. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    this.#db.close();
  }

  /** Closes the database (for `using`). */
  [Symbol.dispose](): void {
    this.close();
  }

  /** Runs SQLite calls; an SQLite error becomes a {@link DatabaseError} naming the file. */
  #sql<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (e instanceof DatabaseError || (e as { code?: string })?.code !== "ERR_SQLITE_ERROR") {
        throw e;
      }
      throw new DatabaseError(
        this.path,
        `Records database "${this.path}": ${
          explain(e, this.path === ":memory:" ? undefined : this.path)
        }`,
        {
          cause: e,
        },
      );
    }
  }

  #stmt(sql: string): StatementSync {
    let s = this.#statements.get(sql);
    if (!s) {
      s = this.#sql(() => this.#db.prepare(sql));
      this.#statements.set(sql, s);
    }
    return s;
  }

  #get(sql: string, ...params: SQLInputValue[]): Row | undefined {
    const s = this.#stmt(sql);
    return this.#sql(() => s.get(...params) as Row | undefined);
  }

  #all(sql: string, ...params: SQLInputValue[]): Row[] {
    const s = this.#stmt(sql);
    return this.#sql(() => s.all(...params) as Row[]);
  }

  #run(sql: string, ...params: SQLInputValue[]): { changes: number; id: number } {
    const s = this.#stmt(sql);
    const r = this.#sql(() => s.run(...params));
    return { changes: Number(r.changes), id: Number(r.lastInsertRowid) };
  }

  #transaction<T>(fn: () => T): T {
    this.#sql(() => this.#db.exec("BEGIN IMMEDIATE"));
    try {
      const out = fn();
      this.#sql(() => this.#db.exec("COMMIT"));
      return out;
    } catch (e) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw e;
    }
  }

  /**
   * Stores a workload if its key (`name:shape`) is new.
   *
   * @returns the id of the workload with that key.
   */
  upsertWorkload(w: WorkloadInput): number {
    const key = workloadKey(w.name, w.shape);
    this.#run(
      "INSERT INTO workloads (name, shape, key, flops) VALUES (?, ?, ?, ?) " +
        "ON CONFLICT (key) DO NOTHING",
      w.name,
      JSON.stringify(w.shape),
      key,
      w.flops,
    );
    return Number(this.#get("SELECT id FROM workloads WHERE key = ?", key)!.id);
  }

  /** The workload with this id, if any. */
  workload(id: number): WorkloadRow | undefined {
    const r = this.#get("SELECT * FROM workloads WHERE id = ?", id);
    return r && {
      id: Number(r.id),
      name: r.name as string,
      shape: parseColumn(this.path, "workload", r.id, "shape", r.shape),
      key: r.key as string,
      flops: Number(r.flops),
    };
  }

  /**
   * Records the start of a run (status `"running"`).
   *
   * @returns the run id.
   */
  startRun(info: RunInfo): number {
    return this.#run(
      `INSERT INTO runs (created, finished, status, strategy, seed, trials, target, workload_id,
        config, machine, compiler, tunebook_version)
       VALUES (?, NULL, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      now(),
      info.strategy,
      info.seed,
      info.trials,
      info.target,
      info.workloadId,
      JSON.stringify(info.config ?? {}),
      JSON.stringify(info.machine ?? {}),
      info.compiler,
      info.tunebookVersion,
    ).id;
  }

  /**
   * Marks a run finished now.
   *
   * @throws {DatabaseError} if there is no such run.
   */
  finishRun(runId: number): void {
    const { changes } = this.#run(
      "UPDATE runs SET status = 'finished', finished = ? WHERE id = ?",
      now(),
      runId,
    );
    if (changes === 0) {
      throw new DatabaseError(this.path, `No run ${runId} in records database "${this.path}"`);
    }
  }

  /** The run with this id, if any. */
  run(runId: number): RunRow | undefined {
    const r = this.#get("SELECT * FROM runs WHERE id = ?", runId);
    return r && toRun(this.path, r);
  }

  /** All runs, oldest first. */
  runs(): RunRow[] {
    return this.#all("SELECT * FROM runs ORDER BY id").map((r) => toRun(this.path, r));
  }

  /** The most recent run still `"running"` (e.g. one that was killed), if any. */
  lastUnfinishedRun(): RunRow | undefined {
    const r = this.#get("SELECT * FROM runs WHERE status = 'running' ORDER BY id DESC LIMIT 1");
    return r && toRun(this.path, r);
  }

  /**
   * Records a candidate of a run. If the run already has a candidate with the
   * same trace hash, nothing is inserted and its id is returned.
   *
   * @returns the candidate id.
   */
  addCandidate(runId: number, c: CandidateInput): number {
    const { changes, id } = this.#run(
      `INSERT INTO candidates (run_id, trial, trace, trace_hash, knobs, created)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, trace_hash) DO NOTHING`,
      runId,
      c.trial,
      c.trace,
      c.traceHash,
      c.knobs === undefined ? null : JSON.stringify(c.knobs),
      now(),
    );
    if (changes > 0) return id;
    return Number(
      this.#get(
        "SELECT id FROM candidates WHERE run_id = ? AND trace_hash = ?",
        runId,
        c.traceHash,
      )!
        .id,
    );
  }

  /**
   * Records the measurement of a candidate. When `errorKind` is `"none"` and
   * `times` is non-empty, `seconds` is the median of `times` and `gflops` is
   * the workload's flops / seconds / 1e9; otherwise both are null.
   *
   * A result of a transient error kind (`isTransient`) is not final: a later
   * result of the same candidate replaces it.
   *
   * @returns the result id.
   * @throws {DatabaseError} if the candidate does not exist or already has a final result.
   */
  addResult(candidateId: number, r: ResultInput): number {
    if (!ERROR_KIND_SET.has(r.errorKind)) {
      throw new DatabaseError(this.path, `Unknown error kind "${r.errorKind}"`);
    }
    const old = this.#get("SELECT id, error_kind FROM results WHERE candidate_id = ?", candidateId);
    if (!old || !isTransient(old.error_kind as ErrorKind)) {
      return this.#insertResult(candidateId, r);
    }
    // Replace the transient result in one transaction: a kill in between loses nothing.
    return this.#transaction(() => {
      this.#run("DELETE FROM results WHERE id = ?", old.id);
      return this.#insertResult(candidateId, r);
    });
  }

  #insertResult(candidateId: number, r: ResultInput): number {
    const row = this.#get(
      `SELECT w.flops AS flops, (SELECT id FROM results WHERE candidate_id = c.id) AS result_id
       FROM candidates c JOIN runs ON runs.id = c.run_id JOIN workloads w ON w.id = runs.workload_id
       WHERE c.id = ?`,
      candidateId,
    );
    if (!row) {
      throw new DatabaseError(
        this.path,
        `No candidate ${candidateId} in records database "${this.path}"`,
      );
    }
    if (row.result_id !== null) {
      throw new DatabaseError(
        this.path,
        `Candidate ${candidateId} already has a result in records database "${this.path}"`,
      );
    }
    let seconds: number | null = null;
    let gflops: number | null = null;
    if (r.errorKind === "none" && r.times.length > 0) {
      seconds = median(r.times);
      gflops = seconds > 0 ? Number(row.flops) / seconds / 1e9 : null;
    }
    return this.#run(
      `INSERT INTO results (candidate_id, error_kind, error, times, seconds, gflops, build_seconds,
        run_seconds, timestamp, verify_seconds, strategy_seconds, framework_seconds, load1, steal,
        cpu_mhz, probe_gbps) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      candidateId,
      r.errorKind,
      r.error ?? null,
      JSON.stringify(r.times),
      seconds,
      gflops,
      r.buildSeconds,
      r.runSeconds,
      now(),
      finiteOrNull(r.verifySeconds),
      finiteOrNull(r.strategySeconds),
      finiteOrNull(r.frameworkSeconds),
      finiteOrNull(r.conditions?.load1),
      finiteOrNull(r.conditions?.steal),
      finiteOrNull(r.conditions?.cpuMhz),
      finiteOrNull(r.conditions?.probeGBps),
    ).id;
  }

  /** The result with this id (as {@link RecordsDB.addResult} returned it), if any. */
  result(resultId: number): ResultRow | undefined {
    const r = this.#get(`SELECT ${this.#resultColumns} FROM results r WHERE r.id = ?`, resultId);
    return (r && toResult(this.path, r)) ?? undefined;
  }

  /** The candidates of a run with their results (null if unmeasured), by trial. */
  candidates(runId: number): CandidateRow[] {
    return this.#all(
      `SELECT ${CANDIDATE_COLUMNS}, ${this.#resultColumns}
       FROM candidates c LEFT JOIN results r ON r.candidate_id = c.id
       WHERE c.run_id = ? ORDER BY c.trial, c.id`,
      runId,
    ).map((r) => toCandidate(this.path, r));
  }

  /** Trace hash -> result, for the candidates of a run that have a result. */
  measured(runId: number): Map<string, ResultRow> {
    const out = new Map<string, ResultRow>();
    for (
      const r of this.#all(
        `SELECT c.trace_hash, ${this.#resultColumns}
         FROM candidates c JOIN results r ON r.candidate_id = c.id
         WHERE c.run_id = ? ORDER BY c.trial, c.id`,
        runId,
      )
    ) {
      out.set(r.trace_hash as string, toResult(this.path, r)!);
    }
    return out;
  }

  /** The fastest candidate of a run among results with error kind `"none"`. */
  best(runId: number): (CandidateRow & { result: ResultRow }) | undefined {
    const r = this.#get(
      `SELECT ${CANDIDATE_COLUMNS}, ${this.#resultColumns}
       FROM candidates c JOIN results r ON r.candidate_id = c.id
       WHERE c.run_id = ? AND r.error_kind = 'none' AND r.seconds IS NOT NULL
       ORDER BY r.seconds, c.trial, c.id LIMIT 1`,
      runId,
    );
    return r && (toCandidate(this.path, r) as CandidateRow & { result: ResultRow });
  }

  /** How many candidates of a run were measured, and how many were valid or errors. */
  counts(runId: number): RunCounts {
    const r = this.#get(
      `SELECT COUNT(r.id) AS measured,
              COALESCE(SUM(r.error_kind = 'none'), 0) AS valid
       FROM candidates c JOIN results r ON r.candidate_id = c.id WHERE c.run_id = ?`,
      runId,
    )!;
    const measured = Number(r.measured);
    const valid = Number(r.valid);
    return { measured, valid, errors: measured - valid };
  }
}
