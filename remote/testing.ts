/**
 * Real services for tests and benchmarks: a `redis-server` or a PostgreSQL
 * cluster started on a free port of 127.0.0.1 in a temporary directory, and
 * stopped (directory removed) by `stop()`. PostgreSQL refuses to run as root:
 * as root, `initdb` and `pg_ctl` run as the `postgres` user (`runuser`).
 *
 * A test that needs a service calls {@link redisMissing} / {@link postgresMissing}
 * first and is ignored, with that message, when the binaries are absent
 * (`bash scripts/setup.sh distributed` installs them).
 *
 * @example
 * ```ts ignore
 * import { startRedis } from "./testing.ts";
 * const redis = await startRedis({ appendOnly: true });
 * console.log(redis.url); // redis://127.0.0.1:PORT
 * await redis.stop();
 * ```
 * @module
 */

/** A running service. */
export interface Service {
  /** Where clients connect: `redis://127.0.0.1:PORT` or `postgres://postgres@127.0.0.1:PORT/postgres`. */
  url: string;
  port: number;
  /** The temporary directory holding its data and log. */
  dir: string;
  /** Stops it (SIGTERM, so Redis writes its append-only file) and removes its directory. */
  stop(): Promise<void>;
}

/** A running Redis that can also be stopped and started again on the same port and data. */
export interface RedisService extends Service {
  /** Stops the server, keeping its directory (its append-only file). */
  halt(): Promise<void>;
  /** Starts the server again on the same port and directory. */
  restart(): Promise<void>;
}

/** A running PostgreSQL that can also be stopped at once and started again on the same port and data. */
export interface PostgresService extends Service {
  /** Stops the server at once (`pg_ctl -m immediate`, as a crash), keeping its data. */
  halt(): Promise<void>;
  /** Starts the server again on the same port and data. */
  restart(): Promise<void>;
}

/** Options of {@link startRedis}. */
export interface RedisOptions {
  /** Append-only file on, fsync at every write (so a restart loses nothing). Default false. */
  appendOnly?: boolean;
}

/** A free TCP port of 127.0.0.1 (bound, then released). */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Why Redis tests cannot run here, or undefined when `redis-server` is installed. */
export function redisMissing(): string | undefined {
  return which("redis-server")
    ? undefined
    : "redis-server not installed (bash scripts/setup.sh distributed installs it): Redis tests skipped";
}

/** Why PostgreSQL tests cannot run here, or undefined when `initdb` and `pg_ctl` are found. */
export function postgresMissing(): string | undefined {
  return pgBin("initdb") && pgBin("pg_ctl")
    ? undefined
    : "PostgreSQL (initdb, pg_ctl) not installed (bash scripts/setup.sh distributed installs it): tests skipped";
}

/** Starts `redis-server` bound to 127.0.0.1 on a free port; resolves once it answers PING. */
export async function startRedis(options: RedisOptions = {}): Promise<RedisService> {
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "tunebook-redis-" });
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--logfile",
    `${dir}/redis.log`,
    ...(options.appendOnly ? ["--appendonly", "yes", "--appendfsync", "always"] : []),
  ];
  let child: Deno.ChildProcess | undefined;
  const start = async () => {
    child = new Deno.Command("redis-server", {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    })
      .spawn();
    await waitFor(() => ping(port), `redis-server on port ${port} (log: ${dir}/redis.log)`);
  };
  const halt = async () => {
    if (!child) return;
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    await child.status;
    child = undefined;
  };
  try {
    await start();
  } catch (e) {
    await halt();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw e;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    halt,
    restart: start,
    async stop() {
      await halt();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** Starts a PostgreSQL cluster (trust authentication, user `postgres`) on a free port. */
export async function startPostgres(): Promise<PostgresService> {
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "tunebook-pg-" });
  const asRoot = Deno.uid() === 0;
  const data = `${dir}/data`;
  const pg = (bin: string, args: string[]) =>
    run(
      asRoot ? ["runuser", "-u", "postgres", "--", pgBin(bin)!, ...args] : [pgBin(bin)!, ...args],
    );
  const halt = async () => {
    await pg("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => {});
  };
  const stop = async () => {
    await halt();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const start = () =>
    pg("pg_ctl", [
      "-D",
      data,
      "-l",
      `${dir}/postgres.log`,
      "-w",
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      "start",
    ]);
  try {
    if (asRoot) await run(["chown", "postgres:postgres", dir], false);
    await pg("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
    await start();
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    stop,
    halt,
    restart: start,
  };
}

/** Path of a PostgreSQL binary: on PATH, else the newest /usr/lib/postgresql/N/bin. */
function pgBin(name: string): string | undefined {
  const found = which(name);
  if (found) return found;
  try {
    const versions = [...Deno.readDirSync("/usr/lib/postgresql")].map((e) => e.name)
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const p = `/usr/lib/postgresql/${v}/bin/${name}`;
      if (isFile(p)) return p;
    }
  } catch {
    // No PostgreSQL installed.
  }
  return undefined;
}

function which(name: string): string | undefined {
  for (const d of (Deno.env.get("PATH") ?? "").split(":")) {
    if (d && isFile(`${d}/${name}`)) return `${d}/${name}`;
  }
  return undefined;
}

function isFile(p: string): boolean {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
}

async function run(cmd: string[], check = true): Promise<void> {
  const out = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (check && !out.success) {
    const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
    throw new Error(`${cmd.join(" ")} failed: ${text.trim().slice(-2000)}`);
  }
}

/** True when a Redis on `port` answers PING. */
async function ping(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await conn.write(new TextEncoder().encode("PING\r\n"));
      const buf = new Uint8Array(16);
      const n = await conn.read(buf);
      return n !== null && new TextDecoder().decode(buf.subarray(0, n)).startsWith("+PONG");
    } finally {
      conn.close();
    }
  } catch {
    return false;
  }
}

async function waitFor(ok: () => Promise<boolean>, what: string, seconds = 20): Promise<void> {
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not start within ${seconds} s`);
}
