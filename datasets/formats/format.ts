/**
 * What an export format is: a name and a function from the rows of an
 * export to the bytes of its file. One format a file in this folder;
 * `registry.ts` names them.
 *
 * @example
 * ```ts
 * import type { ExportFormatWriter } from "./format.ts";
 * const lines: ExportFormatWriter = {
 *   name: "lines",
 *   encode: (ctx) => ctx.map((c) => c.row.trace_hash + "\n").join(""),
 * };
 * if (lines.encode([], {}) !== "") throw new Error();
 * ```
 * @module
 */
import type { ExportOptions, RowContext } from "../export_rows.ts";

/** One export format. */
export interface ExportFormatWriter {
  /** The format's name (`--format`). */
  name: string;
  /** The file's content for the rows (with their knob vectors and spaces). */
  encode(
    ctx: readonly RowContext[],
    options: ExportOptions,
  ): string | Uint8Array | Promise<string | Uint8Array>;
}
