/**
 * The `--queue` URL: where Redis is, and how to reach it safely.
 *
 * - `redis://HOST:PORT` (plain), `rediss://HOST:PORT` (TLS; the server's
 *   certificate is checked against the system's CAs, or the CA file named by
 *   `TUNEBOOK_QUEUE_CA`).
 * - A password in the URL (`redis://:PASSWORD@HOST:PORT`, or with a user,
 *   `redis://USER:PASSWORD@...`) or, to keep it off command lines, in the
 *   environment variable `TUNEBOOK_QUEUE_PASSWORD`.
 * - A database number as the path: `redis://HOST:PORT/2`. Default 0.
 *
 * @example
 * ```ts
 * import { parseQueueUrl } from "./connection.ts";
 * const c = parseQueueUrl("redis://127.0.0.1:6390");
 * if (c.port !== 6390 || c.host !== "127.0.0.1") throw new Error();
 * ```
 * @module
 */

/** A `--queue` URL that cannot be used; the message names it. */
export class QueueUrlError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "QueueUrlError";
  }
}

/** Redis unreachable (at start, or mid-run for longer than the grace period): resumable. */
export class QueueLostError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "QueueLostError";
  }
}

/** A `measure` call through the queue ended by a stop request (Ctrl-C): resumable. */
export class QueueStoppedError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "QueueStoppedError";
  }
}

/** No worker of the wanted target and version is announced, or several machines are. */
export class NoWorkerError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "NoWorkerError";
  }
}

/** Connection options for ioredis (and BullMQ's `connection`). */
export interface QueueConnection {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls?: { ca?: string };
  /** BullMQ's workers and event readers need commands to wait for a reconnection. */
  maxRetriesPerRequest: null;
  /** The URL without its password, for messages. */
  display: string;
}

/** Parses and checks a `--queue` URL; see the module documentation. */
export function parseQueueUrl(url: string): QueueConnection {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new QueueUrlError(`--queue ${url}: not a URL (expected redis://HOST:PORT)`);
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") {
    throw new QueueUrlError(`--queue ${url}: scheme must be redis:// or rediss://`);
  }
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!host) throw new QueueUrlError(`--queue ${url}: no host`);
  const port = u.port ? Number(u.port) : 6379;
  const path = u.pathname.replace(/^\//, "");
  if (path && !/^\d+$/.test(path)) {
    throw new QueueUrlError(`--queue ${url}: the path must be a database number`);
  }
  const password = u.password
    ? decodeURIComponent(u.password)
    : Deno.env.get("TUNEBOOK_QUEUE_PASSWORD") || undefined;
  const caFile = Deno.env.get("TUNEBOOK_QUEUE_CA");
  let ca: string | undefined;
  if (caFile) {
    try {
      ca = Deno.readTextFileSync(caFile);
    } catch (e) {
      throw new QueueUrlError(`TUNEBOOK_QUEUE_CA ${caFile}: ${(e as Error).message}`);
    }
  }
  const safe = new URL(u.href);
  if (safe.password) safe.password = "***";
  return {
    host,
    port,
    db: path ? Number(path) : 0,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(password ? { password } : {}),
    ...(u.protocol === "rediss:" ? { tls: ca ? { ca } : {} } : {}),
    maxRetriesPerRequest: null,
    display: safe.href.replace(/\/$/, ""),
  };
}

/** What {@link closeQueueClient} closes: BullMQ's `Queue` and `QueueEvents` have this shape. */
export interface ClosableQueuePart {
  close(): Promise<unknown>;
  disconnect(): Promise<unknown>;
}

/**
 * Closes a client's queue, its event reader and its own Redis connection.
 * With Redis gone a graceful close would wait for it, so it gives up after
 * `graceMs`, then drops the connections (BullMQ's `disconnect` waits for a
 * connection first: not awaited).
 *
 * @example
 * ```ts
 * import { closeQueueClient } from "./connection.ts";
 * const part = { close: () => Promise.resolve(), disconnect: () => Promise.resolve() };
 * let dropped = false;
 * await closeQueueClient([part, part], { disconnect: () => dropped = true });
 * if (!dropped) throw new Error();
 * ```
 */
export async function closeQueueClient(
  parts: readonly ClosableQueuePart[],
  redis: { disconnect(): void },
  graceMs = 1000,
): Promise<void> {
  const closed = Promise.allSettled(parts.map((p) => p.close()));
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([closed, new Promise((r) => timer = setTimeout(r, graceMs))]);
  clearTimeout(timer);
  for (const p of parts) p.disconnect().catch(() => {});
  redis.disconnect();
}
