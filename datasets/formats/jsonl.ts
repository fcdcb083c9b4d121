/**
 * The JSON Lines export format: one object per row with the schema's keys in
 * order.
 * @module
 */
import { EXPORT_SCHEMA, type ExportRow } from "../export_rows.ts";
import type { ExportFormatWriter } from "./format.ts";

/** One row as a JSON Lines line: an object with the schema's keys in order. */
export function jsonLine(row: ExportRow): string {
  return JSON.stringify(Object.fromEntries(EXPORT_SCHEMA.map((c) => [c.name, row[c.name]])));
}

/**
 * The `jsonl` format.
 *
 * @example
 * ```ts
 * import { JSONL_FORMAT } from "./jsonl.ts";
 * if (JSONL_FORMAT.name !== "jsonl") throw new Error();
 * ```
 */
export const JSONL_FORMAT: ExportFormatWriter = Object.freeze<ExportFormatWriter>({
  name: "jsonl",
  encode: (ctx: readonly { row: ExportRow }[]) => ctx.map((c) => jsonLine(c.row) + "\n").join(""),
});
