/**
 * A measurement worker: takes jobs from its machine's queue, one at a time,
 * builds and measures each in a subprocess (`child.ts`), and returns every
 * repeat and the error kind.
 *
 * BullMQ settings, and why: the lock is 2 s, renewed every second, and the
 * stalled-job check runs every second, so the job of a killed worker is back
 * in the queue within about 3 s and runs on another worker; it may stall once
 * (`maxStalledCount` 1): the second time it fails, and the tuner records it
 * as `worker_lost` (transient: measured again on `--resume`). Jobs are
 * removed from Redis once done (the tuner reads results from the event
 * stream). A job of another tunebook version fails at once, unrecoverable:
 * queues are per version already, so that only happens to a job crafted by
 * hand.
 *
 * @example
 * ```ts ignore
 * import { startWorker } from "./queue_worker.ts";
 * const w = await startWorker({ url: "redis://127.0.0.1:6379" });
 * // ... later
 * await w.close();
 * ```
 * @module
 */
import { UnrecoverableError, Worker } from "npm:bullmq@6.7.0";
import { Redis } from "npm:ioredis@6.0.0";
import { createBuilder } from "../measure/builder.ts";
import type { MeasureResult } from "../measure/measurer.ts";
import { MeasureChild } from "./child.ts";
import { parseQueueUrl, QueueLostError } from "./connection.ts";
import { parseJob } from "./job.ts";
import { parseRunJob } from "./run_job.ts";
import { Semaphore } from "../measure/semaphore.ts";
import {
  type Announcement,
  describeThisMachine,
  type Machine,
  machineKey,
  MACHINES_KEY,
  queueName,
  runQueueName,
} from "./machine.ts";

/** BullMQ lock of a job being measured, in milliseconds. */
export const LOCK_MS = 2000;
/** How often workers look for jobs whose lock expired (their worker died), in milliseconds. */
export const STALLED_CHECK_MS = 1000;
/** How often a worker renews its announcement, in milliseconds. */
export const ANNOUNCE_MS = 2000;

/** Options of {@link startWorker}. */
export interface WorkerOptions {
  /** The `--queue` URL. */
  url: string;
  /** One line per event (start, each job, errors). Default: none. */
  log?: (line: string) => void;
  /** Overrides the machine description (tests give several workers distinct machines). */
  machine?: Partial<Machine>;
}

/** A running worker. */
export interface RunningWorker {
  machine: Machine;
  key: string;
  queue: string;
  /** Jobs finished so far. */
  readonly jobs: number;
  /** Stops taking jobs, finishes the one in hand, and closes connections. */
  close(): Promise<void>;
}

/** Starts a worker; resolves once it has announced itself and listens to its queue. */
export async function startWorker(o: WorkerOptions): Promise<RunningWorker> {
  const { display, ...connection } = parseQueueUrl(o.url);
  const log = o.log ?? (() => {});
  const machine = {
    ...await describeThisMachine(await createBuilder().describe()),
    ...o.machine,
  };
  const key = await machineKey(machine);
  const queue = queueName(key);
  const id = `${Deno.hostname()}:${Deno.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const redis = new Redis({ ...connection, lazyConnect: true });
  redis.on("error", () => {}); // Reconnects on its own; the worker logs its own errors.
  try {
    await redis.connect();
  } catch (e) {
    redis.disconnect();
    throw new QueueLostError(`cannot reach Redis at ${display}: ${(e as Error).message}`);
  }
  const announce = async () => {
    const a: Announcement = {
      ...machine,
      key,
      queue,
      host: Deno.hostname(),
      pid: Deno.pid,
      lastSeen: Date.now(),
    };
    await redis.hset(MACHINES_KEY, id, JSON.stringify(a));
  };
  await announce();
  const timer = setInterval(() => announce().catch(() => {}), ANNOUNCE_MS);
  const child = new MeasureChild();
  let jobs = 0;
  // One job at a time on this machine, measurement or run: timings are never shared.
  const one = new Semaphore(1);
  const exclusive = async <T>(f: () => Promise<T>): Promise<T> => {
    await one.acquire();
    try {
      return await f();
    } finally {
      one.release();
    }
  };
  const checkVersion = (id: string | undefined, version: string) => {
    if (version !== machine.version) {
      throw new UnrecoverableError(
        `job ${id} comes from tunebook ${version}; this worker runs ${machine.version}`,
      );
    }
  };
  const settings = {
    connection,
    concurrency: 1,
    lockDuration: LOCK_MS,
    lockRenewTime: LOCK_MS / 2,
    stalledInterval: STALLED_CHECK_MS,
    maxStalledCount: 1,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
  };
  const worker = new Worker<unknown, MeasureResult>(
    queue,
    async (job) => {
      const data = parseJob(job.data);
      checkVersion(job.id, data.version);
      const result = await exclusive(() => child.measure(data));
      jobs++;
      log(`job ${job.id}: ${result.errorKind}${result.times.length ? ` ${result.times[0]}` : ""}`);
      return result;
    },
    settings,
  );
  const runs = new Worker<unknown, unknown>(
    await runQueueName(machine.version),
    async (job) => {
      const data = parseRunJob(job.data);
      checkVersion(job.id, data.version);
      const result = await exclusive(() => child.request("run", data));
      jobs++;
      log(`job ${job.id}: run ${data.run.strategy} seed ${data.run.seed} on ${data.run.space}`);
      return result;
    },
    settings,
  );
  for (const w of [worker, runs]) {
    w.on("error", (e) => log(`error: ${e.message}`));
    w.on("failed", (job, e) => log(`job ${job?.id} failed: ${e.message}`));
  }
  await worker.waitUntilReady();
  await runs.waitUntilReady();
  log(
    `worker ${id} on ${display}: ${machine.target}, ${machine.cpu}, gpu ${
      machine.gpu ?? "none"
    }, tunebook ${machine.version}; queue ${queue}`,
  );
  return {
    machine,
    key,
    queue,
    get jobs() {
      return jobs;
    },
    async close() {
      clearInterval(timer);
      if (redis.status === "ready") {
        await Promise.all([worker.close(), runs.close()]); // Finishes the job in hand.
        await redis.hdel(MACHINES_KEY, id).catch(() => {});
      } else {
        // Redis gone: nothing to hand a result to; don't wait for it to come back.
        await Promise.race([
          Promise.all([worker.close(true), runs.close(true)]),
          new Promise((r) => setTimeout(r, 1000)),
        ]);
      }
      await child.close();
      redis.disconnect();
    },
  };
}
