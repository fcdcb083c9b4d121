/**
 * Distributed measurement with real parts: a Redis server, `deno task
 * worker` processes and `tune --queue` as subprocesses, a records database.
 * Each test starts its own Redis on a free port of 127.0.0.1 and stops it.
 */
import assert from "node:assert/strict";
import { lastJsonLine } from "../cli/output.ts";
import { join } from "node:path";
import { Redis } from "npm:ioredis@6.0.0";
import { RecordsDB } from "../datasets/db.ts";
import { readLines } from "../measure/lines.ts";
import { MACHINES_KEY } from "../remote/machine.ts";
import { redisMissing, startRedis } from "../remote/testing.ts";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";
import { scriptArgs } from "../cli/script.ts";

const missing = redisMissing();
if (missing) console.warn(missing);

/** Small, quick measurements: what is tested is the queue, not the timings. */
const TUNE = [
  "--workload",
  "matmul",
  "--shape",
  "32,32,32",
  "--repeat",
  "1",
  "--min-repeat-ms",
  "0",
  "--quiet",
];

/**
 * Measurements of at least 50 ms each: a run of a few dozen trials lasts long
 * enough that a Redis stopped after its first jobs stops it midway.
 */
const TUNE_SLOW = [
  ...TUNE.slice(0, TUNE.indexOf("--min-repeat-ms")),
  "--min-repeat-ms",
  "50",
  "--quiet",
];

/** A worker subprocess whose stderr lines are counted (one line per finished job). */
class WorkerProc {
  readonly child: Deno.ChildProcess;
  jobs = 0;
  readonly lines: string[] = [];
  constructor(url: string) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: scriptArgs("cli/queue_worker.ts", ["--queue", url]),
      env: SHARED_KERNEL_CACHE,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stderr = this.child.stderr;
    (async () => {
      for await (const line of readLines(stderr)) {
        this.lines.push(line);
        if (/^worker: job \S+: /.test(line)) this.jobs++;
      }
    })();
  }
  kill(signal: Deno.Signal = "SIGTERM") {
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

async function startWorkers(url: string, n: number): Promise<WorkerProc[]> {
  const workers = Array.from({ length: n }, () => new WorkerProc(url));
  const port = Number(new URL(url).port);
  const redis = new Redis({ host: "127.0.0.1", port });
  try {
    await until(async () => (await redis.hlen(MACHINES_KEY)) >= n, `${n} workers to announce`);
  } finally {
    redis.disconnect();
  }
  return workers;
}

async function stopAll(workers: WorkerProc[]) {
  for (const w of workers) w.kill("SIGKILL");
  await Promise.all(workers.map((w) => w.child.status));
}

/** The run's candidates: trial -> trace hash, and their results' error kinds. */
function records(path: string) {
  const db = RecordsDB.open(path, { mode: "read" });
  try {
    // The tuning run (its finalists, timed again after the search, are a run of their own).
    const run = db.runs().filter((r) => r.strategy !== "finalists").at(-1)!;
    const cands = db.candidates(run.id);
    return {
      status: run.status,
      hashes: cands.map((c) => `${c.trial}:${c.traceHash}`),
      kinds: cands.map((c) => c.result?.errorKind ?? "missing"),
    };
  } finally {
    db.close();
  }
}

const opts = { ignore: missing !== undefined, sanitizeOps: false, sanitizeResources: false };

Deno.test({
  ...opts,
  name:
    "tune --queue with three workers, one SIGKILLed midway, records the exact trials of a local run, none lost or duplicated",
  async fn() {
    const redis = await startRedis();
    const dir = await Deno.makeTempDir();
    const workers = await startWorkers(redis.url, 3);
    try {
      const args = [...TUNE_SLOW, "--trials", "18", "--batch", "6", "--seed", "7"];
      const remote = runScript(
        "cli/tune.ts",
        [...args, "--db", join(dir, "remote.db"), "--queue", redis.url],
        dir,
        SHARED_KERNEL_CACHE,
      );
      // Midway: the first worker has finished a job and holds its next one.
      await until(() => workers[0].jobs >= 1, "the first worker's first job");
      workers[0].kill("SIGKILL");
      const atKill = workers.reduce((n, w) => n + w.jobs, 0);
      const r = await remote;
      assert.equal(r.code, 0, r.stderr);
      const local = await runScript(
        "cli/tune.ts",
        [...args, "--db", join(dir, "local.db")],
        dir,
        SHARED_KERNEL_CACHE,
      );
      assert.equal(local.code, 0, local.stderr);
      const got = records(join(dir, "remote.db"));
      const want = records(join(dir, "local.db"));
      assert.equal(got.status, "finished");
      assert.equal(got.hashes.length, 18);
      assert.equal(new Set(got.hashes.map((h) => h.split(":")[1])).size, 18);
      assert.deepEqual(got.hashes, want.hashes);
      assert.deepEqual(got.kinds, want.kinds);
      assert.ok(atKill < 18, `the run was over (${atKill} jobs) before the kill`);
      assert.ok(workers[1].jobs + workers[2].jobs > 0);
    } finally {
      await stopAll(workers);
      await redis.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  ...opts,
  name: "tune --queue goes on through a Redis restart (append-only file) and ends with every trial",
  async fn() {
    const redis = await startRedis({ appendOnly: true });
    const dir = await Deno.makeTempDir();
    const workers = await startWorkers(redis.url, 2);
    try {
      const remote = runScript(
        "cli/tune.ts",
        [
          ...TUNE_SLOW,
          "--trials",
          "24",
          "--batch",
          "4",
          "--db",
          join(dir, "r.db"),
          "--queue",
          redis.url,
        ],
        dir,
        SHARED_KERNEL_CACHE,
      );
      await until(() => workers[0].jobs + workers[1].jobs >= 3, "three jobs done");
      await redis.halt();
      const before = workers[0].jobs + workers[1].jobs;
      await new Promise((r) => setTimeout(r, 500));
      await redis.restart();
      const r = await remote;
      assert.equal(r.code, 0, r.stderr);
      const got = records(join(dir, "r.db"));
      assert.equal(got.status, "finished");
      assert.equal(new Set(got.hashes).size, 24);
      assert.ok(before < 24, `the run was over (${before} jobs) before Redis stopped`);
      assert.ok(got.kinds.every((k) => k === "none"), got.kinds.join(","));
    } finally {
      await stopAll(workers);
      await redis.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  ...opts,
  name:
    "tune --queue stops with exit 2 and one line when Redis goes away, and --resume finishes the run with nothing lost",
  async fn() {
    const redis = await startRedis({ appendOnly: true });
    const dir = await Deno.makeTempDir();
    const workers = await startWorkers(redis.url, 1);
    const env = { ...SHARED_KERNEL_CACHE, TUNEBOOK_QUEUE_GRACE: "1" };
    try {
      const db = join(dir, "r.db");
      const remote = runScript(
        "cli/tune.ts",
        [
          ...TUNE_SLOW,
          "--trials",
          "24",
          "--batch",
          "4",
          "--seed",
          "3",
          "--db",
          db,
          "--queue",
          redis.url,
        ],
        dir,
        env,
      );
      await until(() => workers[0].jobs >= 2, "two jobs done");
      await redis.halt();
      const r = await remote;
      assert.equal(r.code, 2, r.stderr);
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], /^tune: lost the queue: .* the run is resumable: .*--resume/);
      const before = records(db);
      assert.equal(before.status, "running");
      await redis.restart();
      const again = await runScript(
        "cli/tune.ts",
        ["--db", db, "--resume", "--queue", redis.url, "--quiet"],
        dir,
        env,
      );
      assert.equal(again.code, 0, again.stderr);
      const after = records(db);
      assert.equal(after.status, "finished");
      assert.equal(after.hashes.length, 24);
      assert.equal(new Set(after.hashes).size, 24);
      assert.ok(after.kinds.every((k) => k === "none"), after.kinds.join(","));
      // What was measured before Redis went away is kept, not measured again.
      const done = before.hashes.filter((_, i) => before.kinds[i] !== "missing");
      assert.ok(done.length >= 2);
      for (const h of done) assert.ok(after.hashes.includes(h));
    } finally {
      await stopAll(workers);
      await redis.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  ...opts,
  name: "tune --queue without a worker exits 2 naming the command that starts one",
  async fn() {
    const redis = await startRedis();
    const dir = await Deno.makeTempDir();
    try {
      const r = await runScript(
        "cli/tune.ts",
        [...TUNE, "--trials", "2", "--db", join(dir, "r.db"), "--queue", redis.url],
        dir,
      );
      assert.equal(r.code, 2);
      assert.match(r.stderr, /^tune: no worker for target cpu .*deno task worker --queue/);
      const bad = await runScript(
        "cli/tune.ts",
        [...TUNE, "--trials", "2", "--db", join(dir, "r.db"), "--queue", "http://x"],
        dir,
      );
      assert.equal(bad.code, 2);
      assert.match(
        bad.stderr,
        /^tune: --queue http:\/\/x: scheme must be redis:\/\/ or rediss:\/\//,
      );
    } finally {
      await redis.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  ...opts,
  name:
    "compare --queue sends whole runs of a replayed cache to three workers, one SIGKILLed midway: same results as without, every run recorded once",
  async fn() {
    const redis = await startRedis();
    const dir = await Deno.makeTempDir();
    const workers = await startWorkers(redis.url, 3);
    try {
      const args = [
        "--space",
        "pnpoly_RTX_3090",
        "--strategies",
        "random,sa,ga",
        "--seeds",
        "4",
        "--budget",
        "20,50",
        "--quiet",
      ];
      const running = runScript(
        "cli/compare.ts",
        [...args, "--out", join(dir, "q"), "--db", join(dir, "q.db"), "--queue", redis.url],
        dir,
      );
      await until(() => workers.some((w) => w.jobs >= 1), "a first run");
      workers[0].kill("SIGKILL");
      const remote = await running;
      assert.equal(remote.code, 0, remote.stderr);
      const local = await runScript("cli/compare.ts", [...args, "--out", join(dir, "l")], dir);
      assert.equal(local.code, 0, local.stderr);
      const got = lastJsonLine(remote.stdout), want = lastJsonLine(local.stdout);
      for (const k of ["optimum", "results", "reach", "scores"]) assert.deepEqual(got[k], want[k]);
      assert.ok(workers[0].jobs + workers[1].jobs + workers[2].jobs >= 12);
      const db = RecordsDB.open(join(dir, "q.db"), { mode: "read" });
      try {
        const runs = db.runs();
        assert.equal(runs.length, 12);
        assert.ok(runs.every((r) => r.status === "finished"));
        assert.ok(runs.every((r) => db.candidates(r.id).length === 50));
      } finally {
        db.close();
      }
    } finally {
      await stopAll(workers);
      await redis.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
