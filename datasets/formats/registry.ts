/**
 * The export formats by name: `csv`, `jsonl`, `parquet`, `autotvm`,
 * `kerneltuner` and `t4`, one file each in this folder.
 *
 * @example
 * ```ts
 * import { EXPORT_FORMATS, exportFormat } from "./registry.ts";
 * if (exportFormat("csv").name !== "csv" || !EXPORT_FORMATS.includes("parquet")) throw new Error();
 * ```
 * @module
 */
import { ExportError } from "../export_rows.ts";
import { AUTOTVM_FORMAT } from "./autotvm.ts";
import { CSV_FORMAT } from "./csv.ts";
import type { ExportFormatWriter } from "./format.ts";
import { JSONL_FORMAT } from "./jsonl.ts";
import { KERNEL_TUNER_FORMAT } from "./kerneltuner.ts";
import { PARQUET_FORMAT } from "./parquet.ts";
import { T4_FORMAT } from "./t4.ts";

/** Formats `exportRecords` writes. */
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

const WRITERS: Readonly<Record<ExportFormat, ExportFormatWriter>> = Object.freeze({
  csv: CSV_FORMAT,
  jsonl: JSONL_FORMAT,
  parquet: PARQUET_FORMAT,
  autotvm: AUTOTVM_FORMAT,
  kerneltuner: KERNEL_TUNER_FORMAT,
  t4: T4_FORMAT,
});

/**
 * The writer of an export format.
 *
 * @throws {ExportError} for a name that is not one of {@link EXPORT_FORMATS}
 */
export function exportFormat(name: string): ExportFormatWriter {
  if (!(EXPORT_FORMATS as readonly string[]).includes(name)) {
    throw new ExportError(
      `Unknown export format ${JSON.stringify(name)}; known: ${EXPORT_FORMATS.join(", ")}`,
    );
  }
  return WRITERS[name as ExportFormat];
}
