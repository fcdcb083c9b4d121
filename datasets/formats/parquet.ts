/**
 * The Parquet export format (zstd): the schema's columns, except that
 * `features` is replaced by one float64 column per feature, named
 * `feature.<name>` for each of the describer's feature names (null when the
 * features are unavailable). Integers are int64, numbers float64, the rest
 * UTF-8 strings. Readable by pandas, polars and DuckDB.
 * @module
 */
import "npm:@uwdata/flechette@2.6.0";
import { EXPORT_SCHEMA, type ExportRow, NO_FEATURES, type RowDescriber } from "../export_rows.ts";
import type { ExportFormatWriter } from "./format.ts";

/** Names of the Parquet feature columns of a describer: `feature.<name>` per feature. */
export function parquetFeatureColumns(describe: RowDescriber = NO_FEATURES): string[] {
  return describe.featureNames.map((n) => `feature.${n}`);
}

async function parquetBytes(
  rows: readonly ExportRow[],
  describe: RowDescriber,
): Promise<Uint8Array> {
  const fl = await import("npm:@uwdata/flechette@2.6.0");
  const pq = await import("npm:parquet-wasm@0.8.0");
  const columns: [string, unknown[]][] = [];
  const types: Record<string, unknown> = {};
  for (const c of EXPORT_SCHEMA) {
    if (c.name === "features") {
      const parsed = rows.map((r) => (r.features === null ? null : JSON.parse(r.features)));
      parquetFeatureColumns(describe).forEach((name, i) => {
        columns.push([name, parsed.map((f) => (f === null ? null : f[i] ?? null))]);
        types[name] = fl.float64();
      });
      continue;
    }
    columns.push([c.name, rows.map((r) => r[c.name])]);
    types[c.name] = c.type === "integer"
      ? fl.int64()
      : c.type === "number"
      ? fl.float64()
      : fl.utf8();
  }
  // deno-lint-ignore no-explicit-any
  const table = fl.tableFromArrays(columns as any, { types: types as any });
  const ipc = fl.tableToIPC(table, { format: "stream" });
  if (!ipc) throw new Error("Arrow IPC encoding produced nothing");
  const arrow = pq.Table.fromIPCStream(ipc);
  const props = new pq.WriterPropertiesBuilder()
    .setCompression(pq.Compression.ZSTD)
    .setCreatedBy("tunebook export")
    .build();
  return pq.writeParquet(arrow, props);
}

/**
 * The `parquet` format.
 *
 * @example
 * ```ts
 * import { PARQUET_FORMAT } from "./parquet.ts";
 * if (PARQUET_FORMAT.name !== "parquet") throw new Error();
 * ```
 */
export const PARQUET_FORMAT: ExportFormatWriter = Object.freeze<ExportFormatWriter>({
  name: "parquet",
  encode: (ctx, options) => parquetBytes(ctx.map((c) => c.row), options.describe ?? NO_FEATURES),
});
