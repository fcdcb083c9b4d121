/**
 * What a file is to the records database (private to datasets/db.ts): its
 * mark (`PRAGMA application_id`), the SQLite header, and the verdict on a
 * file that is not tunebook's, made before anything is written to it.
 * @module
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import type { DatabaseSync } from "node:sqlite";

/**
 * `PRAGMA application_id` of a tunebook records database: the bytes "TBRK".
 * tunebook writes only to files that carry it, to new (missing or empty)
 * files, and to databases of earlier tunebook versions (its four tables, no
 * application id), which it marks when it first writes to them.
 */
export const APPLICATION_ID = 0x5442524b;

/** The tables of a records database (they identify an unmarked one of an earlier version). */
const TABLES = ["workloads", "runs", "candidates", "results"] as const;

/** Size of the file at `path`, undefined when there is none. */
export function fileSize(path: string, fail: (why: string) => never): number | undefined {
  let info;
  try {
    info = statSync(path);
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return undefined;
    return fail(reason(e));
  }
  if (!info.isFile()) fail("it is not a file");
  return info.size;
}

/**
 * Whether the file at `path` starts with the 16 bytes of the SQLite header
 * (false when it cannot be read).
 *
 * @example
 * ```ts
 * import { isSqliteFile } from "./_db_file.ts";
 * if (isSqliteFile("/no/such/file")) throw new Error();
 * ```
 */
export function isSqliteFile(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const head = new Uint8Array(16);
    readSync(fd, head, 0, 16, 0);
    return new TextDecoder().decode(head) === "SQLite format 3\0";
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * What an SQLite file is to tunebook: `marked` (application id set), or an
 * unmarked records database of an earlier version, or (when `emptyOk`) an
 * empty one; else `foreign`, with the reason it is refused.
 */
export function classify(
  db: DatabaseSync,
  { emptyOk }: { emptyOk: boolean },
): { marked: boolean; foreign?: string } {
  const one = (sql: string) => Object.values(db.prepare(sql).get() ?? {})[0];
  const id = Number(one("PRAGMA application_id"));
  if (id === APPLICATION_ID) return { marked: true };
  if (id !== 0) {
    return {
      marked: false,
      foreign: `it is another program's SQLite database (application_id ${id}, ` +
        `not tunebook's ${APPLICATION_ID}); tunebook writes only to its own records databases`,
    };
  }
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all())
    .map((r) => String(r.name));
  if (TABLES.every((t) => tables.includes(t))) return { marked: false };
  if (tables.length === 0 && Number(one("PRAGMA user_version")) === 0) {
    return { marked: false, ...(emptyOk ? {} : { foreign: FOREIGN_EMPTY }) };
  }
  return {
    marked: false,
    foreign: `it is another program's SQLite database (tables: ${
      tables.slice(0, 5).join(", ") || "none"
    }); tunebook writes only to its own records databases`,
  };
}

const FOREIGN_EMPTY =
  "it is an SQLite database that tunebook did not create; tunebook writes only to its own records databases";

/** An SQLite error in plain words (a read-only file says so). */
export function explain(e: unknown): string {
  const msg = reason(e);
  if (/readonly|read-only/i.test(msg)) return `the file is read-only (${msg})`;
  if (/malformed|not a database/i.test(msg)) return `the file is damaged (${msg})`;
  return msg;
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
