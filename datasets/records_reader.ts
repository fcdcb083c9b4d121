/**
 * Reading records for `export` and `report` from either store: a
 * {@link RecordsReader} is the synchronous, read-only part of
 * {@link RecordsDB} they use. A SQLite file is opened read-only as it is; a
 * PostgreSQL database (`postgres://...`) is read once, whole, into a
 * snapshot that answers the same calls with the same ids.
 *
 * @example
 * ```ts
 * import { createMemoryRecordStore } from "./memory_store.ts";
 * import { snapshotOf } from "./records_reader.ts";
 * const store = createMemoryRecordStore();
 * const workloadId = await store.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 });
 * await store.startRun({
 *   strategy: "random", seed: 1, trials: 1, target: "cpu", workloadId,
 *   config: {}, machine: {}, compiler: "gcc", tunebookVersion: "0",
 * });
 * const reader = await snapshotOf(store);
 * if (reader.runs().length !== 1 || reader.workload(workloadId)?.name !== "matmul") throw new Error();
 * ```
 * @module
 */
import {
  type CandidateRow,
  RecordsDB,
  type ResultRow,
  type RunCounts,
  type RunRow,
  type WorkloadRow,
} from "./db.ts";
import { isPostgresUrl, loadPostgresStore } from "./postgres_url.ts";
import type { RecordStore } from "./record_store.ts";

/** The read-only calls of {@link RecordsDB} that `export` and `report` make. */
export type RecordsReader =
  & Pick<RecordsDB, "path" | "runs" | "run" | "workload" | "candidates" | "counts" | "best">
  & { close(): void };

/** Reads every run, workload and candidate of `store` into a {@link RecordsReader}. */
export async function snapshotOf(store: RecordStore): Promise<RecordsReader> {
  const runs = await store.runs();
  const workloads = new Map<number, WorkloadRow>();
  const candidates = new Map<number, CandidateRow[]>();
  const counts = new Map<number, RunCounts>();
  const best = new Map<number, (CandidateRow & { result: ResultRow }) | undefined>();
  for (const r of runs) {
    if (!workloads.has(r.workloadId)) {
      const w = await store.workload(r.workloadId);
      if (w) workloads.set(w.id, w);
    }
    candidates.set(r.id, await store.candidates(r.id));
    counts.set(r.id, await store.counts(r.id));
    best.set(r.id, await store.best(r.id));
  }
  const copy = <T>(x: T): T => structuredClone(x);
  return {
    path: store.location,
    runs: () => copy(runs),
    run: (id: number): RunRow | undefined => copy(runs.find((r) => r.id === id)),
    workload: (id: number) => copy(workloads.get(id)),
    candidates: (id: number) => copy(candidates.get(id) ?? []),
    counts: (id: number) => copy(counts.get(id) ?? { measured: 0, valid: 0, errors: 0 }),
    best: (id: number) => copy(best.get(id)),
    close() {},
  };
}

/**
 * Opens `db` for reading: a SQLite records file (read-only), or a snapshot
 * of a PostgreSQL database.
 *
 * @throws {DatabaseError} when it cannot be opened or read
 */
export async function openRecordsReader(db: string): Promise<RecordsReader> {
  if (!isPostgresUrl(db)) return RecordsDB.open(db, { mode: "read" });
  const store = await (await loadPostgresStore()).openPostgresRecordStore(db);
  try {
    return await snapshotOf(store);
  } finally {
    await store.close();
  }
}
