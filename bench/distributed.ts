/**
 * Distributed measurement through BullMQ on Redis (issue 18), on this machine:
 *
 * 1. **Queue throughput**: `--jobs` trivial jobs (no measurement) through a
 *    queue with the workers' settings (lock 2 s, stalled check 1 s) and two
 *    in-process workers of concurrency 1: jobs per second, and the overhead
 *    per job (elapsed x workers / jobs). Also the round trip of one job at a
 *    time (add, take, complete, completion event), median of `--jobs / 10`.
 * 2. **Killed-job recovery**: a `deno task worker` takes a job that measures
 *    for seconds and is SIGKILLed; seconds from the kill until a second
 *    worker has taken the job again, and until its result arrives.
 * 3. **Replayed comparison**: `compare --space S --strategies A,B --seeds N
 *    --budget B` without a queue, then with `--queue` and 1, 2 and 4 workers:
 *    wall seconds and speed-up over 1 worker.
 *
 * Each part starts its own Redis on a free port of 127.0.0.1 and stops it.
 * Prints a table per part and ends with one line of JSON.
 *
 * ```sh
 * deno run -A bench/distributed.ts [--jobs 1000] [--space gemm_RTX_3090]
 *   [--strategies bo,xgb] [--seeds 4] [--budget 200] [--workers 1,2,4]
 * ```
 * @module
 */
import { Queue, QueueEvents, Worker } from "npm:bullmq@6.7.0";
import { readLines } from "../measure/lines.ts";
import { scriptArgs } from "../cli/script.ts";
import { createRemoteMeasurer } from "../remote/remote_measurer.ts";
import { MACHINES_KEY } from "../remote/machine.ts";
import { startRedis } from "../remote/testing.ts";
import { LOCK_MS, STALLED_CHECK_MS } from "../remote/queue_worker.ts";
import { createWorkload } from "../ir/workloads.ts";
import { Schedule } from "../ir/schedule.ts";
import { traceOf } from "../ir/trace.ts";
import { createPrng } from "../ir/prng.ts";
import { Redis } from "npm:ioredis@6.0.0";
import { ensureSetupGroup } from "../cli/setup_group.ts";
import { parseFlags, runCommand } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/distributed.ts [--jobs 1000] [--space gemm_RTX_3090]
    [--strategies bo,xgb] [--seeds 4] [--budget 200] [--workers 1,2,4]`;

/** Jobs/s and overhead per job of trivial jobs through the queue. */
export async function queueThroughput(jobs: number): Promise<{
  jobsPerSecond: number;
  overheadMsPerJob: number;
  roundTripMs: number;
}> {
  const redis = await startRedis();
  const connection = { host: "127.0.0.1", port: redis.port, maxRetriesPerRequest: null };
  const settings = {
    connection,
    concurrency: 1,
    lockDuration: LOCK_MS,
    stalledInterval: STALLED_CHECK_MS,
    maxStalledCount: 1,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
  };
  const queue = new Queue("bench", { connection });
  const events = new QueueEvents("bench", { connection });
  const workers = [0, 1].map(() =>
    new Worker("bench", (job) => Promise.resolve(job.data.i), settings)
  );
  try {
    await events.waitUntilReady();
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    let done = 0;
    let finish = () => {};
    const waiters = new Map<string, () => void>();
    events.on("completed", ({ jobId }) => {
      waiters.get(jobId)?.();
      if (jobId.startsWith("t-") && ++done === jobs) finish();
    });
    const all = new Promise<void>((r) => finish = r);
    const t0 = performance.now();
    await queue.addBulk(
      Array.from(
        { length: jobs },
        (_, i) => ({ name: "j", data: { i }, opts: { jobId: `t-${i}` } }),
      ),
    );
    await all;
    const seconds = (performance.now() - t0) / 1000;
    const trips: number[] = [];
    for (let i = 0; i < Math.max(10, Math.floor(jobs / 10)); i++) {
      const id = `r-${i}`;
      const t = performance.now();
      const got = new Promise<void>((r) => waiters.set(id, r));
      await queue.add("j", { i }, { jobId: id });
      await got;
      trips.push(performance.now() - t);
    }
    trips.sort((a, b) => a - b);
    return {
      jobsPerSecond: jobs / seconds,
      overheadMsPerJob: seconds * 1000 * workers.length / jobs,
      roundTripMs: trips[Math.floor(trips.length / 2)],
    };
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await events.close();
    await queue.close();
    await redis.stop();
  }
}

/** A `deno task worker` subprocess, with the count of its finished jobs. */
function spawnWorker(url: string): { child: Deno.ChildProcess; jobs: () => number } {
  const child = new Deno.Command(Deno.execPath(), {
    args: scriptArgs("cli/queue_worker.ts", ["--queue", url]),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let jobs = 0;
  (async () => {
    for await (const line of readLines(child.stderr)) if (/^worker: job /.test(line)) jobs++;
  })();
  return { child, jobs: () => jobs };
}

async function waitWorkers(port: number, n: number): Promise<void> {
  const r = new Redis({ host: "127.0.0.1", port });
  try {
    while ((await r.hlen(MACHINES_KEY)) < n) await new Promise((x) => setTimeout(x, 50));
  } finally {
    r.disconnect();
  }
}

/** Seconds from SIGKILL of the worker holding a job until another takes it, and until its result. */
export async function killedJobRecovery(): Promise<
  { retakenSeconds: number; resultSeconds: number }
> {
  const redis = await startRedis();
  const first = spawnWorker(redis.url);
  let second: ReturnType<typeof spawnWorker> | undefined;
  try {
    await waitWorkers(redis.port, 1);
    const m = await createRemoteMeasurer({
      url: redis.url,
      // About a second of measurement: the job is surely in hand when the worker dies.
      options: {
        timing: { number: 1, repeat: 4, minRepeatMs: 250, warmup: 1 },
        timeoutSeconds: 30,
        inputSeed: 0,
      },
    });
    const w = createWorkload("matmul", [128, 128, 128]);
    const trace = traceOf(new Schedule(w, { prng: createPrng(0) }));
    const queueName = m.machine.queue;
    const connection = { host: "127.0.0.1", port: redis.port, maxRetriesPerRequest: null };
    const events = new QueueEvents(queueName, { connection });
    await events.waitUntilReady();
    const actives: number[] = [];
    events.on("active", () => actives.push(performance.now()));
    const result = m.measure([{ trace }]);
    while (actives.length === 0) await new Promise((x) => setTimeout(x, 10));
    second = spawnWorker(redis.url);
    await waitWorkers(redis.port, 2);
    await new Promise((x) => setTimeout(x, 300)); // the first worker is measuring
    const killed = performance.now();
    first.child.kill("SIGKILL");
    const [r] = await result;
    const end = performance.now();
    await events.close();
    await m.close!();
    if (r.errorKind !== "none") {
      throw new Error(`the recovered job gave ${r.errorKind}: ${r.error}`);
    }
    const retaken = actives.find((t) => t > killed) ?? end;
    return { retakenSeconds: (retaken - killed) / 1000, resultSeconds: (end - killed) / 1000 };
  } finally {
    for (const p of [first, second]) {
      try {
        p?.child.kill("SIGKILL");
      } catch {
        // Gone.
      }
      await p?.child.status;
    }
    await redis.stop();
  }
}

/** Wall seconds of one replayed comparison, without a queue (workers 0) or with n workers. */
export async function comparisonSeconds(args: string[], workers: number): Promise<number> {
  const out = await Deno.makeTempDir();
  const redis = workers > 0 ? await startRedis() : undefined;
  const procs = redis ? Array.from({ length: workers }, () => spawnWorker(redis.url)) : [];
  try {
    if (redis) await waitWorkers(redis.port, workers);
    const t0 = performance.now();
    const r = await new Deno.Command(Deno.execPath(), {
      args: scriptArgs("cli/compare.ts", [
        ...args,
        "--quiet",
        "--out",
        out,
        ...(redis ? ["--queue", redis.url] : []),
      ]),
      stdout: "null",
      stderr: "piped",
    }).output();
    const seconds = (performance.now() - t0) / 1000;
    if (!r.success) throw new Error(`compare failed: ${new TextDecoder().decode(r.stderr)}`);
    return seconds;
  } finally {
    for (const p of procs) p.child.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.child.status));
    await redis?.stop();
    await Deno.remove(out, { recursive: true });
  }
}

if (import.meta.main) {
  await runCommand("distributed", async (argv) => {
    const v = parseFlags(argv, {
      jobs: { type: "string", default: "1000" },
      space: { type: "string", default: "gemm_RTX_3090" },
      strategies: { type: "string", default: "bo,xgb" },
      seeds: { type: "string", default: "4" },
      budget: { type: "string", default: "200" },
      workers: { type: "string", default: "1,2,4" },
    }, USAGE);
    // First use: install what this needs, saying what and why (TUNEBOOK_NO_SETUP=1: don't).
    await ensureSetupGroup("distributed", "bench/distributed.ts starts a Redis server");
    const q = await queueThroughput(Number(v.jobs));
    console.error(
      `queue: ${q.jobsPerSecond.toFixed(0)} jobs/s with 2 workers, ${
        q.overheadMsPerJob.toFixed(2)
      } ms overhead per job, one-job round trip ${q.roundTripMs.toFixed(2)} ms (median)`,
    );
    const k = await killedJobRecovery();
    console.error(
      `killed worker: job taken again ${k.retakenSeconds.toFixed(2)} s after SIGKILL, result ${
        k.resultSeconds.toFixed(2)
      } s after`,
    );
    const args = [
      "--space",
      v.space!,
      "--strategies",
      v.strategies!,
      "--seeds",
      v.seeds!,
      "--budget",
      v.budget!,
    ];
    const local = await comparisonSeconds(args, 0);
    const counts = v.workers!.split(",").map(Number);
    const times: Record<string, number> = {};
    for (const n of counts) times[n] = await comparisonSeconds(args, n);
    console.error(`\ncompare ${args.join(" ")}:\n`);
    console.error("| workers | wall s | speed-up over 1 worker |");
    console.error("|---|---|---|");
    console.error(`| none (local) | ${local.toFixed(2)} | |`);
    for (const n of counts) {
      console.error(
        `| ${n} | ${times[n].toFixed(2)} | ${(times[counts[0]] / times[n]).toFixed(2)} |`,
      );
    }
    console.log(JSON.stringify({
      queue: q,
      killed: k,
      compare: { args, local, workers: times, cores: navigator.hardwareConcurrency },
    }));
  });
}
