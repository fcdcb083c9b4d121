/**
 * Records as data frames (arquero tables), for the notebooks and anyone who
 * wants to filter, group, join or export records without writing loops:
 * {@link runTable} holds one run's measured candidates, one row each, in
 * trial order; {@link recordsTable} the rows of an export (every run, the
 * columns of `EXPORT_SCHEMA`).
 *
 * Figures that summarise (medians, quartiles) come from `ir/stats.ts`, as in
 * every table of the commands: arquero's own `op.median` / `op.quantile`
 * give NaN when an interpolated order statistic is infinite.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { op } from "npm:arquero@8.0.3";
 * import { RecordsDB } from "./db.ts";
 * import { importKernelTunerCache } from "./import.ts";
 * import { KERNELTUNER_DIR } from "./kerneltuner.ts";
 * import { runTable } from "./tables.ts";
 * const db = RecordsDB.open(":memory:");
 * await importKernelTunerCache(db, join(KERNELTUNER_DIR, "pnpoly_RTX_3090.json.gz"));
 * const t = runTable(db, 1);
 * const byKind = t.groupby("error_kind").count().objects() as { error_kind: string }[];
 * if (!byKind.some((r) => r.error_kind === "none")) throw new Error();
 * if (t.rollup({ n: op.count() }).get("n", 0) !== t.numRows()) throw new Error();
 * db.close();
 * ```
 * @module
 */
// arquero 8 asks for @uwdata/flechette ^2; 2.7 needs a package the npm registry lacks, so the
// module graph pins 2.6.0 (no deno.json needed: this holds for an importer in any folder).
import "npm:@uwdata/flechette@2.6.0";
import { type ColumnTable, from, table } from "npm:arquero@8.0.3";
import { RecordsDB } from "./db.ts";
import { checkInteger, described } from "../ir/check.ts";
import { type ExportOptions, exportRows } from "./export_rows.ts";

/**
 * One run's measured candidates as a table: `trial` (from 1), `trace_hash`, `knobs`
 * (the knob vector, or null), `error_kind`, `error`, `seconds` (median of
 * the repeats; null on error), `gflops`, `best_gflops` (the best so far, in
 * trial order; null before the first valid one), `repeats`, `build_seconds`,
 * `run_seconds`, `timestamp`. Unmeasured candidates are left out.
 *
 * @throws {RangeError} when the database holds no run `runId`
 */
export function runTable(db: RecordsDB, runId: number): ColumnTable {
  if (!(db instanceof RecordsDB)) {
    throw new TypeError(
      `db must be a records database (RecordsDB.open(path)), got ${described(db)}`,
    );
  }
  checkInteger(runId, "runId", { min: 1 });
  if (!db.run(runId)) throw new RangeError(`No run ${runId} in records database "${db.path}"`);
  const rows = db.candidates(runId).filter((c) => c.result).sort((a, b) => a.trial - b.trial);
  let best: number | null = null;
  const bestSoFar = rows.map((c) => {
    const g = c.result!.gflops;
    if (g !== null && (best === null || g > best)) best = g;
    return best;
  });
  return table({
    // From 1, as in recordsTable (an export), the tables and the reports; stored from 0.
    trial: rows.map((c) => c.trial + 1),
    trace_hash: rows.map((c) => c.traceHash),
    knobs: rows.map((c) => c.knobs),
    error_kind: rows.map((c) => c.result!.errorKind),
    error: rows.map((c) => c.result!.error),
    seconds: rows.map((c) => c.result!.seconds),
    gflops: rows.map((c) => c.result!.gflops),
    best_gflops: bestSoFar,
    repeats: rows.map((c) => c.result!.times.length),
    build_seconds: rows.map((c) => c.result!.buildSeconds),
    run_seconds: rows.map((c) => c.result!.runSeconds),
    timestamp: rows.map((c) => c.result!.timestamp),
  });
}

/**
 * The rows of an export (`datasets/export_rows.ts`: every measured candidate of
 * the chosen runs, with run metadata and the split) as a table, one column
 * per field of `EXPORT_SCHEMA`, JSON columns as JSON text.
 */
export function recordsTable(db: RecordsDB, options: ExportOptions = {}): ColumnTable {
  return from(exportRows(db, options));
}
