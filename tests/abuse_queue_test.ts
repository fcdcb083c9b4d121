/**
 * Abuse tests of `tune --queue` (issue 41, item 2): a Redis without
 * persistence (`--appendonly no --save ""`) killed and started again on the
 * same port mid-run loses every queued job; `tune` sends them again and ends
 * with every trial. A first Ctrl-C while jobs wait on a queue nobody serves
 * stops it at once, resumable.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Redis } from "npm:ioredis@6.0.0";
import { RecordsDB } from "../datasets/db.ts";
import { readLines } from "../measure/lines.ts";
import { MACHINES_KEY } from "../remote/machine.ts";
import { redisMissing, startRedis } from "../remote/testing.ts";
import { scriptArgs } from "../cli/script.ts";
import { SHARED_KERNEL_CACHE } from "./_cli.ts";

const missing = redisMissing();
if (missing) console.warn(missing);
const opts = { ignore: missing !== undefined, sanitizeOps: false, sanitizeResources: false };

/** Measurements of at least 50 ms each, so that the run lasts past the restart. */
const TUNE = [
  "--workload",
  "matmul",
  "--shape",
  "32,32,32",
  "--repeat",
  "1",
  "--min-repeat-ms",
  "50",
  "--quiet",
];

/** A subprocess whose stderr lines are kept. */
class Proc {
  readonly child: Deno.ChildProcess;
  readonly lines: string[] = [];
  readonly done: Promise<void>;
  constructor(script: string, args: string[], env: Record<string, string>, cwd?: string) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: scriptArgs(script, args),
      env: { ...SHARED_KERNEL_CACHE, ...env },
      ...(cwd ? { cwd } : {}),
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stderr = this.child.stderr;
    this.done = (async () => {
      for await (const line of readLines(stderr)) this.lines.push(line);
    })();
  }
  /** Jobs a worker finished (one line each). */
  jobs(): number {
    return this.lines.filter((l) => /^worker: job \S+: /.test(l)).length;
  }
  kill(signal: Deno.Signal) {
    try {
      this.child.kill(signal);
    } catch {
      // Already gone.
    }
  }
}

async function until(ok: () => boolean | Promise<boolean>, what: string, seconds = 60) {
  const end = Date.now() + seconds * 1000;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function announced(url: string, n: number): Promise<void> {
  const redis = new Redis({ host: "127.0.0.1", port: Number(new URL(url).port) });
  try {
    await until(async () => (await redis.hlen(MACHINES_KEY)) >= n, `${n} workers to announce`);
  } finally {
    redis.disconnect();
  }
}

function records(path: string) {
  const db = RecordsDB.open(path, { mode: "read" });
  try {
    // The tuning run (its finalists, timed again after the search, are a run of their own).
    const run = db.runs().filter((r) => r.strategy !== "finalists").at(-1)!;
    const cands = db.candidates(run.id);
    return {
      status: run.status,
      hashes: cands.map((c) => c.traceHash),
      kinds: cands.map((c) => c.result?.errorKind ?? "missing"),
    };
  } finally {
    db.close();
  }
}

Deno.test({
  ...opts,
  name:
    "tune --queue sends again the jobs a Redis restarted without persistence lost, and ends with every trial",
  async fn() {
    const redis = await startRedis(); // --save "", no append-only file: a restart loses everything
    const dir = await Deno.makeTempDir();
    const worker = new Proc("cli/queue_worker.ts", ["--queue", redis.url], {});
    try {
      await announced(redis.url, 1);
      const db = join(dir, "r.db");
      const tune = new Proc(
        "cli/tune.ts",
        [
          ...TUNE,
          "--trials",
          "16",
          "--batch",
          "4",
          "--seed",
          "5",
          "--db",
          db,
          "--queue",
          redis.url,
        ],
        { TUNEBOOK_QUEUE_GRACE: "20" },
        dir,
      );
      await until(() => worker.jobs() >= 2, "two jobs done");
      const before = worker.jobs();
      await redis.halt();
      await new Promise((r) => setTimeout(r, 300));
      await redis.restart();
      const status = await Promise.race([
        tune.child.status,
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 120_000)),
      ]);
      if (!status) tune.kill("SIGKILL");
      await tune.done;
      const stderr = tune.lines.join("\n");
      assert.ok(status, `tune still waiting 120 s after the restart:\n${stderr}`);
      assert.equal(status.code, 0, stderr);
      assert.match(stderr, /jobs vanished from Redis .*: sent again/);
      const got = records(db);
      assert.equal(got.status, "finished");
      assert.equal(got.hashes.length, 16);
      assert.equal(new Set(got.hashes).size, 16);
      assert.ok(got.kinds.every((k) => k === "none"), got.kinds.join(","));
      assert.ok(before < 16, `the run was over (${before} jobs) before Redis stopped`);
    } finally {
      worker.kill("SIGKILL");
      await worker.child.status;
      await redis.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  ...opts,
  name: "tune --queue stops at the first Ctrl-C while its jobs wait for a worker, resumable",
  async fn() {
    const redis = await startRedis();
    const dir = await Deno.makeTempDir();
    const worker = new Proc("cli/queue_worker.ts", ["--queue", redis.url], {});
    try {
      await announced(redis.url, 1);
      const db = join(dir, "r.db");
      const tune = new Proc(
        "cli/tune.ts",
        [
          ...TUNE,
          "--trials",
          "40",
          "--batch",
          "4",
          "--seed",
          "5",
          "--db",
          db,
          "--queue",
          redis.url,
        ],
        {},
        dir,
      );
      await until(() => worker.jobs() >= 1, "a job done");
      // The only worker gone: the batch in flight waits for ever.
      worker.kill("SIGKILL");
      await worker.child.status;
      await new Promise((r) => setTimeout(r, 500));
      const sent = Date.now();
      tune.kill("SIGINT");
      const status = await Promise.race([
        tune.child.status,
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 20_000)),
      ]);
      if (!status) tune.kill("SIGKILL");
      await tune.done;
      const stderr = tune.lines.join("\n");
      assert.ok(status, `tune went on 20 s after a Ctrl-C:\n${stderr}`);
      assert.equal(status.code, 130, stderr);
      assert.ok(Date.now() - sent < 10_000, `${Date.now() - sent} ms to stop`);
      assert.match(stderr, /resume with: deno task tune --resume --run 1 --db .* --queue URL/);
      // Jobs waiting for a worker are on the queue: none vanished, none sent again.
      assert.doesNotMatch(stderr, /vanished/);
      const got = records(db);
      assert.equal(got.status, "running");
      assert.ok(got.kinds.includes("missing"), "no job was waiting");
      assert.ok(got.kinds.includes("none"), "no record kept");
    } finally {
      worker.kill("SIGKILL");
      await worker.child.status;
      await redis.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
