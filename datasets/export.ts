/**
 * Exports a records database as a data set: one row per measured candidate
 * (a candidate with a result; unmeasured candidates are left out), in CSV,
 * JSON Lines, Parquet or AutoTVM's log format.
 *
 * The rows and their schema are `export_rows.ts`'s ({@link exportRows});
 * each format is a file of `formats/`.
 *
 * Formats (one file each in `formats/`, named by `formats/registry.ts`):
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
 *   caches.
 * - **T4** (`t4`): the same records as the Kernel Tuner cache, in the
 *   community's T4 result format (`datasets/formats/t4.ts`); it reads back
 *   as a recorded space (`compare --space FILE`).
 *
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
import { ioCause } from "./io_errors.ts";
import { dirname, resolve } from "node:path";
import { ExportError, type ExportOptions, exportRowContexts } from "./export_rows.ts";
import { type ExportFormat, exportFormat } from "./formats/registry.ts";
import type { RecordsReader } from "./records_reader.ts";

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
 * @throws {ExportError} for an unknown format, run or holdout workload, a bad fraction, or `out`
 * that cannot be written (a full disk, read-only media)
 */
export async function exportRecords(
  db: RecordsReader,
  format: ExportFormat,
  out: string,
  options: ExportOptions = {},
): Promise<ExportSummary> {
  const writer = exportFormat(format);
  const ctx = exportRowContexts(db, options);
  const rows = ctx.map((c) => c.row);
  const data = await writer.encode(ctx, options);
  const full = resolve(out);
  const existing = await stat(full).catch(() => undefined);
  try {
    if (existing && !existing.isFile() && !existing.isDirectory()) {
      // A device or a pipe (/dev/stdout, /dev/full): written in place, never replaced by a file.
      await writeFile(full, data);
    } else {
      await mkdir(dirname(full), { recursive: true });
      const tmp = `${full}.tmp-${Deno.pid}`;
      try {
        await writeFile(tmp, data);
        await rename(tmp, full);
      } catch (e) {
        await rm(tmp, { force: true });
        throw e;
      }
    }
  } catch (e) {
    // A full disk, read-only media: one line naming the path and the cause.
    throw new ExportError(`Cannot write "${out}": ${ioCause(e)}`);
  }
  const test = rows.filter((r) => r.split === "test");
  return {
    rows: rows.length,
    bytes: typeof data === "string" ? new TextEncoder().encode(data).length : data.length,
    path: out,
    format,
    train: rows.length - test.length,
    test: test.length,
    testWorkloads: [...new Set(test.map((r) => r.workload_key))].sort(),
  };
}
