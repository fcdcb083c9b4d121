/**
 * The CSV export format (RFC 4180, `\n` line ends, a header line): a field is
 * quoted when it holds `,`, `"`, a line break or leading/trailing space, and a
 * JSON field always is; `"` is doubled inside. An empty unquoted field is
 * null; an empty string is written `""`.
 * @module
 */
import { EXPORT_SCHEMA, type ExportRow } from "../export_rows.ts";
import type { ExportFormatWriter } from "./format.ts";

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

/**
 * The `csv` format: the header, then one line per row.
 *
 * @example
 * ```ts
 * import { CSV_FORMAT } from "./csv.ts";
 * if (CSV_FORMAT.name !== "csv") throw new Error();
 * ```
 */
export const CSV_FORMAT: ExportFormatWriter = Object.freeze<ExportFormatWriter>({
  name: "csv",
  encode: (ctx: readonly { row: ExportRow }[]) =>
    [csvHeader(), ...ctx.map((c) => csvLine(c.row))].join("\n") + "\n",
});
