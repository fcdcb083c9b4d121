/**
 * Records of tuning runs: the SQLite records database.
 *
 * @module
 */

export {
  type CandidateInput,
  type CandidateRow,
  DatabaseError,
  type ErrorKind,
  median,
  RecordsDB,
  type ResultInput,
  type ResultRow,
  type RunCounts,
  type RunInfo,
  type RunRow,
  type RunStatus,
  SCHEMA_VERSION,
  type WorkloadInput,
  workloadKey,
  type WorkloadRow,
} from "./db.ts";
export * from "./export.ts";
export * from "./export_rows.ts";
export * from "./formats/autotvm.ts";
export * from "./formats/csv.ts";
export type * from "./formats/format.ts";
export * from "./formats/jsonl.ts";
export * from "./formats/kerneltuner.ts";
export * from "./formats/parquet.ts";
export * from "./formats/registry.ts";
export * from "./import.ts";
export * from "./kerneltuner.ts";
export * from "./tables.ts";
export { type RecordStore, sqliteRecordStore } from "./record_store.ts";
export { createMemoryRecordStore } from "./memory_store.ts";
export { KERNELTUNER_CACHE_NAMES } from "./kerneltuner.ts";
export * from "./cache_names.ts";
// Types that the signatures above name.
export type { RecordsReader } from "./records_reader.ts";
