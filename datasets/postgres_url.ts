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
import { DatabaseError } from "./db.ts";

/**
 * The PostgreSQL server went away mid-run (refused, reset, shut down): what
 * was committed is kept, and the run is resumable once it is back.
 */
export class DatabaseLostError extends DatabaseError {
  /** Creates the error about the database at `location` (a URL without its password). */
  constructor(location: string, message: string, options?: ErrorOptions) {
    super(location, message, options);
    this.name = "DatabaseLostError";
  }
}

const LOST_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
]);

/**
 * True when `e`, thrown by the PostgreSQL client, says the connection to the
 * server is gone (rather than a query the server refused).
 *
 * @example
 * ```ts
 * import { isConnectionLoss } from "./postgres_url.ts";
 * const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), {
 *   code: "ECONNREFUSED",
 * });
 * if (!isConnectionLoss(refused) || isConnectionLoss(new Error("syntax error"))) throw new Error();
 * ```
 */
export function isConnectionLoss(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string" && LOST_CODES.has(code)) return true;
  return /connection terminated|connection (is )?(closed|ended)|server closed the connection|ECONNREFUSED|ECONNRESET/i
    .test(e.message);
}

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
