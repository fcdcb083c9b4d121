/**
 * The tuner's side of whole runs through the queue (`compare --queue` on a
 * replayed cache, see `run_job.ts`): sends a run job to the workers of this
 * tunebook version and awaits its records. Like the remote measurer, it
 * waits for a queued job as long as it takes; a run whose worker dies is
 * run again elsewhere (its lock expires in about 3 s), and a run that fails
 * (twice dead, or an error on the worker) rejects; Redis unreachable for
 * more than `graceSeconds` rejects every pending run with
 * {@link QueueLostError}.
 *
 * @example
 * ```ts ignore
 * import { createRunQueue } from "./run_queue.ts";
 * const q = await createRunQueue({ url: "redis://127.0.0.1:6379" });
 * const records = await q.run({ space: "pnpoly_RTX_3090", absent: "invalid", strategy: "sa", seed: 1, budget: 50 });
 * await q.close();
 * ```
 * @module
 */
import { Queue, QueueEvents } from "npm:bullmq@6.7.0";
import { Redis } from "npm:ioredis@6.0.0";
import { tunebookVersion } from "../datasets/machine.ts";
import { closeQueueClient, parseQueueUrl, QueueLostError } from "./connection.ts";
import { liveAnnouncements, MACHINES_KEY, runQueueName } from "./machine.ts";
import { NoWorkerError } from "./remote_measurer.ts";
import type { RunJob, RunJobResult, RunSpec } from "./run_job.ts";

/** Options of {@link createRunQueue}. */
export interface RunQueueOptions {
  url: string;
  /** Seconds Redis may be unreachable before pending runs reject. Default 10. */
  graceSeconds?: number;
}

/** A queue of whole runs. */
export interface RunQueue {
  /** Sends one run and resolves with its records. */
  run(spec: RunSpec): Promise<RunJobResult>;
  close(): Promise<void>;
}

/** A run job failed on the worker (not a lost queue). */
export class RunJobFailed extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "RunJobFailed";
  }
}

/** Connects and checks that a worker of this version is announced; see the module documentation. */
export async function createRunQueue(o: RunQueueOptions): Promise<RunQueue> {
  const { display, ...connection } = parseQueueUrl(o.url);
  const graceMs = (o.graceSeconds ?? 10) * 1000;
  const version = await tunebookVersion();
  const redis = new Redis({ ...connection, lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on("error", () => {});
  try {
    await redis.connect();
  } catch (e) {
    redis.disconnect();
    throw new QueueLostError(`cannot reach Redis at ${display}: ${(e as Error).message}`);
  }
  const announced = liveAnnouncements(Object.values(await redis.hgetall(MACHINES_KEY)), 30_000)
    .filter((a) => a.version === version);
  if (announced.length === 0) {
    redis.disconnect();
    throw new NoWorkerError(
      `no worker of tunebook ${version} on ${display}; start one with: deno task worker --queue ${display}`,
    );
  }
  const name = await runQueueName(version);
  const queue = new Queue(name, { connection });
  const events = new QueueEvents(name, { connection });
  queue.on("error", () => {});
  events.on("error", () => {});
  await events.waitUntilReady();
  const waiting = new Map<
    string,
    { resolve: (r: RunJobResult) => void; reject: (e: Error) => void }
  >();
  events.on("completed", ({ jobId, returnvalue }) => {
    const w = waiting.get(jobId);
    if (!w) return;
    waiting.delete(jobId);
    try {
      w.resolve(
        (typeof returnvalue === "string" ? JSON.parse(returnvalue) : returnvalue) as RunJobResult,
      );
    } catch (e) {
      w.reject(new RunJobFailed(`unreadable run from the worker: ${(e as Error).message}`));
    }
  });
  events.on("failed", ({ jobId, failedReason }) => {
    const w = waiting.get(jobId);
    if (!w) return;
    waiting.delete(jobId);
    w.reject(new RunJobFailed(`a worker failed run job ${jobId}: ${failedReason}`));
  });
  let downSince: number | undefined;
  const watch = setInterval(() => {
    if (redis.status === "ready") downSince = undefined;
    else downSince ??= Date.now();
    if (downSince !== undefined && Date.now() - downSince > graceMs) {
      const e = new QueueLostError(
        `lost the queue: Redis at ${display} unreachable for ${graceMs / 1000} s`,
      );
      for (const w of waiting.values()) w.reject(e);
      waiting.clear();
    }
  }, 250);
  const token = crypto.randomUUID().slice(0, 8);
  let next = 0;
  return {
    async run(spec) {
      const jobId = `${token}-${next++}`;
      const done = new Promise<RunJobResult>((resolve, reject) => {
        waiting.set(jobId, { resolve, reject });
      });
      const data: RunJob = { version, run: spec };
      await Promise.race([queue.add("run", data, { jobId }), done]);
      return await done;
    },
    async close() {
      clearInterval(watch);
      await closeQueueClient([queue, events], redis);
    },
  };
}
