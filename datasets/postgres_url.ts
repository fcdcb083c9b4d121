/**
 * Telling a PostgreSQL `--db` from a SQLite file, without loading the
 * PostgreSQL client (`postgres_store.ts` loads npm `pg`): commands import
 * that only when a URL is given, so the offline bundle of `tune`
 * (scripts/bundle.sh) carries no database client it does not use.
 *
 * @example
 * ```ts
 * import { displayUrl, isPostgresUrl } from "./postgres_url.ts";
 * if (!isPostgresUrl("postgres://u:pw@h/db") || isPostgresUrl("runs.db")) throw new Error();
 * if (displayUrl("postgres://u:pw@h/db") !== "postgres://u:***@h/db") throw new Error();
 * ```
 * @module
 */
import type { RecordStore } from "./record_store.ts";

/** True when `db` names a PostgreSQL database (`postgres://` or `postgresql://`). */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//.test(db);
}

/** The URL without its password, for messages. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.href;
  } catch {
    return url.replace(/:[^:@/]*@/, ":***@");
  }
}

/**
 * Loads `postgres_store.ts` (and npm `pg`) at run time, through a specifier
 * the module graph does not follow (see the module documentation).
 */
export async function loadPostgresStore(): Promise<{
  openPostgresRecordStore(url: string): Promise<RecordStore>;
}> {
  const specifier = [".", "postgres_store.ts"].join("/");
  return await import(specifier);
}
