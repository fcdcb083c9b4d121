/**
 * `deno task export`: write the measured candidates of a records database as
 * a data set (CSV, JSON Lines, Parquet or AutoTVM log; schema in
 * `datasets/export.ts`) and print one line of JSON: rows, bytes, path,
 * format, and the split's sizes.
 *
 * Exit status: 0 written (or `--help`, on stdout); 2 bad arguments, a
 * missing or unusable database, an `--out` that is the database, another
 * SQLite file or a directory, an unknown run or holdout workload; 1 an
 * unexpected error.
 * @module
 */
import { DatabaseError } from "../datasets/db.ts";
import { isPostgresUrl } from "../datasets/postgres_url.ts";
import { checkStoredCandidates } from "../datasets/integrity.ts";
import { openRecordsReader } from "../datasets/records_reader.ts";
import { ExportError, type ExportOptions } from "../datasets/export_rows.ts";
import { EXPORT_FORMATS, type ExportFormat } from "../datasets/formats/registry.ts";
import { exportRecords } from "../tuner/export.ts";
import { HelpRequest, oneLine, parseFlags, permissionDenied, UsageError } from "./args.ts";
import { checkOutputFile } from "./output.ts";

/** Usage text of `export`. */
export const EXPORT_USAGE = `usage: deno task export --db PATH --format FORMAT --out PATH [options]

  --db PATH                 records database to read (must exist)
  --format FORMAT           ${EXPORT_FORMATS.join(" | ")}
  --out PATH                file to write (its directory is created; never the
                            database, another SQLite file or a directory)
  --runs ID,ID,...          export only these runs (default: all but the finalists runs
                            that confirm a tune run: re-measurements, not candidates)
  --holdout KEY,KEY,...     put these workloads in the test split, e.g.
                            matmul:512,512,512,dense:16,24,8 (repeatable)
  --holdout-fraction F      or hold out a fraction F of the workloads, chosen
  --split-seed N            with seed N (default 1)
  --quiet                   accepted, as by every command (export prints only its JSON line)
  --help                    this text`;

/** Parsed arguments of `export`. */
export interface ExportArgs {
  /** Records database. */
  db: string;
  /** Output format. */
  format: ExportFormat;
  /** Output path. */
  out: string;
  /** Runs and split. */
  options: ExportOptions;
}

/**
 * Splits a holdout list into workload keys: a new key starts at each
 * `name:` after a comma, so `matmul:512,512,512,dense:16,24,8` is two keys.
 */
export function parseHoldout(text: string): string[] {
  const keys = text.split(/,(?=\s*[A-Za-z_][\w.-]*:)/).map((k) => k.trim().replace(/\s+/g, ""));
  for (const k of keys) {
    if (!/^[A-Za-z_][\w.-]*:(-?\d+(,-?\d+)*)?$/.test(k)) {
      throw new UsageError(
        `--holdout: ${JSON.stringify(k)} is not a workload key like matmul:512,512,512`,
      );
    }
  }
  return keys;
}

/** Parses `export`'s arguments; throws UsageError on any problem. */
export function parseExportArgs(argv: string[]): ExportArgs {
  const v = parseFlags(
    argv,
    {
      db: { type: "string" },
      format: { type: "string" },
      out: { type: "string" },
      runs: { type: "string" },
      holdout: { type: "string", multiple: true },
      "holdout-fraction": { type: "string" },
      "split-seed": { type: "string" },
      quiet: { type: "boolean", default: false },
    },
    EXPORT_USAGE,
  );
  if (v.db === undefined || v.db === "") throw new UsageError("Missing --db PATH");
  if (v.format === undefined) {
    throw new UsageError(`Missing --format (${EXPORT_FORMATS.join(", ")})`);
  }
  if (!(EXPORT_FORMATS as readonly string[]).includes(v.format)) {
    throw new UsageError(
      `Unknown --format "${v.format}"; known: ${EXPORT_FORMATS.join(", ")}`,
    );
  }
  if (v.out === undefined || v.out === "") throw new UsageError("Missing --out PATH");
  const options: ExportOptions = {};
  if (v.runs !== undefined) {
    options.runs = v.runs.split(",").map((s, i) => {
      const t = s.trim();
      if (!/^\d+$/.test(t) || Number(t) < 1) {
        throw new UsageError(`--runs: item ${i + 1} ${JSON.stringify(t)} is not a run id`);
      }
      return Number(t);
    });
  }
  const fraction = v["holdout-fraction"];
  if (v.holdout !== undefined && fraction !== undefined) {
    throw new UsageError("Give --holdout or --holdout-fraction, not both");
  }
  if (v.holdout !== undefined) options.split = { holdout: v.holdout.flatMap(parseHoldout) };
  if (v["split-seed"] !== undefined && fraction === undefined) {
    throw new UsageError("--split-seed needs --holdout-fraction");
  }
  if (fraction !== undefined) {
    const f = Number(fraction);
    if (fraction.trim() === "" || !Number.isFinite(f) || f < 0 || f > 1) {
      throw new UsageError(`--holdout-fraction must be between 0 and 1, got "${fraction}"`);
    }
    const seedText = v["split-seed"] ?? "1";
    if (!/^-?\d+$/.test(seedText.trim())) {
      throw new UsageError(`--split-seed must be an integer, got "${seedText}"`);
    }
    options.split = { holdoutFraction: f, seed: Number(seedText) };
  }
  return { db: v.db, format: v.format as ExportFormat, out: v.out, options };
}

/** Runs the command; returns the exit status. */
export async function main(argv: string[]): Promise<number> {
  try {
    const args = parseExportArgs(argv);
    try {
      if (!isPostgresUrl(args.db) && !(await Deno.stat(args.db)).isFile) {
        throw new UsageError(`--db "${args.db}" is not a file`);
      }
    } catch (e) {
      if (e instanceof UsageError || e instanceof Deno.errors.NotCapable) throw e;
      throw new UsageError(`--db "${args.db}": no such records database`);
    }
    checkOutputFile(args.out, { flag: "--out", db: args.db });
    const db = await openRecordsReader(args.db);
    try {
      // A trace that is not valid JSON, or not the one its hash names, is not exported.
      for (const run of db.runs()) {
        if (args.options.runs && !args.options.runs.includes(run.id)) continue;
        await checkStoredCandidates(db.candidates(run.id), args.db);
      }
      const s = await exportRecords(db, args.format, args.out, args.options);
      console.log(JSON.stringify({
        rows: s.rows,
        bytes: s.bytes,
        path: s.path,
        format: s.format,
        train: s.train,
        test: s.test,
        testWorkloads: s.testWorkloads,
      }));
    } finally {
      db.close();
    }
    return 0;
  } catch (e) {
    if (e instanceof HelpRequest) {
      console.log(e.message);
      return 0;
    }
    if (e instanceof UsageError || e instanceof ExportError || e instanceof DatabaseError) {
      console.error(`export: ${oneLine(e.message)}`);
      return 2;
    }
    const denied = permissionDenied(e);
    if (denied) {
      console.error(`export: ${oneLine(denied)}`);
      return 2;
    }
    throw e;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
