/**
 * What a file is to the records database (private to datasets/db.ts): its
 * mark (`PRAGMA application_id`), the SQLite header, and the verdict on a
 * file that is not tunebook's, made before anything is written to it.
 * @module
 */
import { closeSync, existsSync, openSync, readSync, statfsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { DatabaseSync } from "node:sqlite";
import { unwritable } from "./io_errors.ts";

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

/**
 * An SQLite error in plain words (a read-only file says so); given the
 * file's `path`, an error of opening or writing it names the media's cause:
 * a full disk, a read-only file system, a permission.
 */
export function explain(e: unknown, path?: string): string {
  const msg = reason(e);
  if (
    path &&
    /unable to open database file|readonly|read-only|disk I\/O error|disk is full/i.test(msg)
  ) {
    if (noSpaceLeft(path)) return `no space left on device (ENOSPC: ${msg})`;
    const why = unwritable(path);
    if (why && /readonly|read-only/i.test(msg)) return `the file is read-only (${why}; ${msg})`;
    if (why) return `${why}: ${msg}`;
  }
  if (/database or disk is full/i.test(msg)) return `no space left on device (${msg})`;
  if (/readonly|read-only/i.test(msg)) return `the file is read-only (${msg})`;
  if (/malformed|not a database/i.test(msg)) return `the file is damaged (${msg})`;
  return msg;
}

/** True when the file system holding `path` (or its nearest existing directory) has no free block. */
export function noSpaceLeft(path: string): boolean {
  let target = resolve(path);
  while (!existsSync(target) && dirname(target) !== target) target = dirname(target);
  try {
    return statfsSync(target).bavail === 0;
  } catch {
    return false;
  }
}

/**
 * Opens the SQLite file at `path` read-only and reads its header. A database
 * in WAL mode on read-only media cannot be read so (SQLite cannot create the
 * `-shm` file it reads the WAL through: "unable to open database file"):
 * then, the directory being unwritable and no write-ahead log waiting to be
 * merged, it is opened immutable (`?immutable=1`): nothing can write there.
 */
export function openReadOnly(path: string, busyMs: number): DatabaseSync {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    db.exec(`PRAGMA busy_timeout = ${busyMs}`);
    db.prepare("PRAGMA schema_version").get();
    return db;
  } catch (e) {
    db.close();
    if (!/unable to open database file/i.test(reason(e))) throw e;
    const why = unwritable(dirname(resolve(path)));
    if (!why) throw e;
    let wal = 0;
    try {
      wal = statSync(`${path}-wal`).size;
    } catch { /* no write-ahead log */ }
    if (wal > 0) {
      throw new Error(
        `it is on unwritable media (${why}) with a write-ahead log not merged into it ` +
          `(${path}-wal); copy both files to writable storage to read them`,
      );
    }
    const immutable = new DatabaseSync(`${pathToFileURL(resolve(path)).href}?immutable=1`, {
      readOnly: true,
    });
    immutable.prepare("PRAGMA schema_version").get();
    return immutable;
  }
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
