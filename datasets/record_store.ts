/**
 * The records a tuning loop reads and writes, behind one interface
 * (MetaSchedule's Database): workloads, runs, the candidates of a run
 * (recorded before they are built) and their results. Every method is
 * asynchronous so that a store may live across a network (a PostgreSQL
 * store); the embedded ones answer at once.
 *
 * Implementations: {@link sqliteRecordStore} over the SQLite
 * {@link RecordsDB} (a file that outlives the process: `tune`, `compare
 * --db`) and `createMemoryRecordStore` of `memory_store.ts` (`compare`'s
 * default, tests).
 *
 * The promises a store keeps are {@link RecordsDB}'s: a candidate's trace
 * hash is unique within its run (adding it again returns the first id); a
 * result of a transient error kind (`isTransient`) is replaced by a later
 * result of the same candidate, any other result is final.
 *
 * @example
 * ```ts
 * import { RecordsDB } from "./db.ts";
 * import { sqliteRecordStore } from "./record_store.ts";
 * const store = sqliteRecordStore(RecordsDB.open(":memory:"));
 * const workloadId = await store.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 });
 * const run = await store.startRun({
 *   strategy: "random", seed: 1, trials: 1, target: "cpu", workloadId,
 *   config: {}, machine: {}, compiler: "gcc", tunebookVersion: "0",
 * });
 * const id = await store.addCandidate(run, { trial: 0, trace: "{}", traceHash: "h" });
 * const r = await store.addResult(id, { errorKind: "none", times: [2, 1, 3], buildSeconds: 0, runSeconds: 0 });
 * if (r.seconds !== 2 || (await store.measured(run)).get("h")?.id !== r.id) throw new Error();
 * await store.close();
 * ```
 * @module
 */
import { checkBoolean, checkObject, described } from "../ir/check.ts";
import { RecordsDB } from "./db.ts";
import type {
  CandidateInput,
  CandidateRow,
  ResultInput,
  ResultRow,
  RunCounts,
  RunInfo,
  RunRow,
  WorkloadInput,
  WorkloadRow,
} from "./db.ts";

/** Where tuning runs keep their records; see the module documentation. */
export interface RecordStore {
  /** Where the records live, for messages (a path, `":memory:"`, a URL without its password). */
  readonly location: string;
  /** Records a workload once (by name and shape) and returns its id. */
  upsertWorkload(w: WorkloadInput): Promise<number>;
  /** The workload with this id, if any. */
  workload(id: number): Promise<WorkloadRow | undefined>;
  /** Records the start of a run (status `"running"`) and returns its id. */
  startRun(info: RunInfo): Promise<number>;
  /** Marks a run finished. */
  finishRun(runId: number): Promise<void>;
  /** The run with this id (its `config` is what a resume needs), if any. */
  run(runId: number): Promise<RunRow | undefined>;
  /** The most recent run still `"running"`, if any. */
  lastUnfinishedRun(): Promise<RunRow | undefined>;
  /** All runs, oldest first. */
  runs(): Promise<RunRow[]>;
  /** Records a candidate; the same trace hash in the same run returns the first id. */
  addCandidate(runId: number, c: CandidateInput): Promise<number>;
  /** Records a candidate's result and returns it as stored (median `seconds`, `gflops`). */
  addResult(candidateId: number, r: ResultInput): Promise<ResultRow>;
  /** Trace hash -> result, for the candidates of a run that have one. */
  measured(runId: number): Promise<Map<string, ResultRow>>;
  /** The candidates of a run with their results (null if unmeasured), by trial. */
  candidates(runId: number): Promise<CandidateRow[]>;
  /** How many candidates of a run were measured, valid or errors. */
  counts(runId: number): Promise<RunCounts>;
  /** The fastest valid candidate of a run, if any. */
  best(runId: number): Promise<(CandidateRow & { result: ResultRow }) | undefined>;
  /** Releases the store (closes the database). */
  close(): Promise<void>;
}

/**
 * The SQLite {@link RecordsDB} as a {@link RecordStore} (every write
 * committed before its promise resolves).
 *
 * @param db an open records database
 * @param options `close`: whether {@link RecordStore.close} closes `db` (default true)
 */
export function sqliteRecordStore(
  db: RecordsDB,
  options: { close?: boolean } = {},
): RecordStore {
  if (!(db instanceof RecordsDB)) {
    throw new TypeError(
      `db must be a records database (RecordsDB.open(path)), got ${described(db)}`,
    );
  }
  checkObject(options, "options");
  checkBoolean(options.close, "close", { optional: true });
  // Promise.resolve().then: a throwing call becomes a rejected promise, never a synchronous throw.
  const later = <T>(f: () => T): Promise<T> => Promise.resolve().then(f);
  return {
    location: db.path,
    upsertWorkload: (w) => later(() => db.upsertWorkload(w)),
    workload: (id) => later(() => db.workload(id)),
    startRun: (info) => later(() => db.startRun(info)),
    finishRun: (runId) => later(() => db.finishRun(runId)),
    run: (runId) => later(() => db.run(runId)),
    lastUnfinishedRun: () => later(() => db.lastUnfinishedRun()),
    runs: () => later(() => db.runs()),
    addCandidate: (runId, c) => later(() => db.addCandidate(runId, c)),
    addResult: (candidateId, r) => later(() => db.result(db.addResult(candidateId, r))!),
    measured: (runId) => later(() => db.measured(runId)),
    candidates: (runId) => later(() => db.candidates(runId)),
    counts: (runId) => later(() => db.counts(runId)),
    best: (runId) => later(() => db.best(runId)),
    close: () => later(() => (options.close ?? true) ? db.close() : undefined),
  };
}
