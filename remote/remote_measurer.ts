/**
 * The remote {@link Measurer}: sends each candidate of a batch as one job to
 * the queue of a machine whose workers announced themselves on Redis, and
 * returns the results in the batch's order (calling `onResult` as each
 * arrives). The tuner keeps the records database and its resume; the
 * workers only measure.
 *
 * - Timeouts count running time only: the worker's runner times the run; the
 *   measurer waits for a queued job as long as it takes (a job waits for a
 *   worker, it does not fail). `onWaiting` says so when nothing finished for
 *   a while.
 * - A worker that dies mid-job: BullMQ puts its job back after its lock
 *   expires (about 3 s) and another worker runs it; a job that stalls twice
 *   is a `worker_lost` result (transient: measured again on `--resume`).
 *   Jobs waiting in the queue are never failed because a worker vanished.
 * - Redis unreachable for more than `graceSeconds` (default 10): the pending
 *   `measure` call rejects with {@link QueueLostError}; the loop stops, the
 *   candidates without results stay unfinished in the records, and
 *   `--resume` measures them.
 * - Jobs that vanished from Redis (a restart without persistence, a flush,
 *   an eviction) are sent again, once Redis answers, within a second; a
 *   result whose event was lost with them is read from its job.
 * - `signal` aborted (the first Ctrl-C): the pending `measure` call rejects
 *   at once with {@link QueueStoppedError}; the run is resumable.
 *
 * @example
 * ```ts ignore
 * import { createRemoteMeasurer } from "./remote_measurer.ts";
 * const m = await createRemoteMeasurer({ url: "redis://127.0.0.1:6379", options });
 * const results = await m.measure([{ trace }]);
 * await m.close!();
 * ```
 * @module
 */
import { sameTarget } from "../ir/target.ts";
import { Queue, QueueEvents } from "npm:bullmq@6.7.0";
import { Redis } from "npm:ioredis@6.0.0";
import type { Candidate } from "../ir/candidate.ts";
import type { MeasureBatchOptions, MeasureResult } from "../measure/measurer.ts";
import { tunebookVersion } from "../datasets/machine.ts";
import {
  closeQueueClient,
  NoWorkerError,
  parseQueueUrl,
  QueueLostError,
  QueueStoppedError,
} from "./connection.ts";
export { NoWorkerError, QueueLostError, QueueStoppedError };
import { type MeasureJob, parseResult } from "./job.ts";
import { type Announcement, liveAnnouncements, MACHINES_KEY } from "./machine.ts";
import type { RemoteMeasurer, RemoteMeasurerOptions } from "./remote_types.ts";

export type { RemoteMeasurer, RemoteMeasurerOptions } from "./remote_types.ts";

/** Connects, picks the machine, and returns the measurer; see the module documentation. */
export async function createRemoteMeasurer(o: RemoteMeasurerOptions): Promise<RemoteMeasurer> {
  const { display, ...connection } = parseQueueUrl(o.url);
  const graceMs = (o.graceSeconds ?? 10) * 1000;
  const version = await tunebookVersion();
  const target = o.target ?? "cpu";
  const redis = new Redis({ ...connection, lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on("error", () => {});
  try {
    await withTimeout(redis.connect(), graceMs, `cannot reach Redis at ${display}`);
  } catch (e) {
    redis.disconnect();
    throw new QueueLostError((e as Error).message);
  }
  let machine: Announcement;
  try {
    machine = pickMachine(
      Object.values(await redis.hgetall(MACHINES_KEY)),
      { target, version, key: o.machine, staleMs: (o.staleSeconds ?? 30) * 1000, display },
    );
  } catch (e) {
    redis.disconnect();
    throw e;
  }
  const queue = new Queue(machine.queue, { connection });
  const events = new QueueEvents(machine.queue, { connection });
  queue.on("error", () => {});
  events.on("error", () => {});
  await withTimeout(events.waitUntilReady(), graceMs, `cannot reach Redis at ${display}`)
    .catch(async (e) => {
      await Promise.allSettled([queue.close(), events.close()]);
      redis.disconnect();
      throw new QueueLostError(e.message);
    });

  const token = crypto.randomUUID().slice(0, 8);
  let next = 0;
  const waiting = new Map<string, (r: MeasureResult) => void>();
  const completed = (jobId: string, returnvalue: unknown) => {
    const done = waiting.get(jobId);
    if (!done) return;
    waiting.delete(jobId);
    try {
      done(parseResult(returnvalue));
    } catch (e) {
      done(failure("unknown", `unreadable result from the worker: ${(e as Error).message}`));
    }
  };
  const failed = (jobId: string, failedReason: string) => {
    const done = waiting.get(jobId);
    if (!done) return;
    waiting.delete(jobId);
    done(
      /stalled/i.test(failedReason)
        ? failure("worker_lost", `its worker died twice: ${failedReason}`)
        : failure("unknown", `the worker failed the job: ${failedReason}`),
    );
  };
  events.on("completed", ({ jobId, returnvalue }) => completed(jobId, returnvalue));
  events.on("failed", ({ jobId, failedReason }) => failed(jobId, failedReason));

  /**
   * The jobs sent and not finished, by id. Every `checkMs` while Redis
   * answers, each one's hash is read: a job that vanished (Redis restarted
   * without persistence, a flush, an eviction) is sent again; one that
   * finished without its event reaching us (the event stream lost with it) is
   * taken from its hash.
   */
  const sent = new Map<string, { name: string; data: MeasureJob; opts: { jobId: string } }>();
  const checkMs = o.checkSeconds !== undefined ? o.checkSeconds * 1000 : 1000;
  /** Consecutive looks that found a job missing, by id. */
  const missing = new Map<string, number>();
  let checking = false;
  let lastCheck = Date.now();
  const checkJobs = async () => {
    if (checking || redis.status !== "ready" || Date.now() - lastCheck < checkMs) return;
    checking = true;
    lastCheck = Date.now();
    try {
      const ids = [...sent.keys()].filter((id) => waiting.has(id));
      if (ids.length === 0) return;
      const pipe = redis.pipeline();
      for (const id of ids) {
        // `timestamp` is set when a job is added: absent, the job's hash is gone.
        pipe.hmget(queue.toKey(id), "timestamp", "finishedOn", "returnvalue", "failedReason");
      }
      const answers = (await pipe.exec()) ?? [];
      const lost: string[] = [];
      ids.forEach((id, i) => {
        const [err, value] = answers[i] ?? [new Error("no answer"), null];
        if (err) return;
        const [timestamp, finishedOn, returnvalue, failedReason] = value as (string | null)[];
        if (timestamp === null) {
          // Missing twice in a row: a finished job is removed at once (removeOnComplete), and
          // its event may still be on its way at the first look.
          const misses = (missing.get(id) ?? 0) + 1;
          missing.set(id, misses);
          if (misses >= 2) lost.push(id);
          return;
        }
        missing.delete(id);
        if (finishedOn !== null && returnvalue !== null) completed(id, returnvalue);
        else if (finishedOn !== null && failedReason !== null) failed(id, failedReason);
      });
      const again = lost.filter((id) => waiting.has(id)).map((id) => sent.get(id)!);
      for (const id of lost) missing.delete(id);
      if (again.length) {
        await queue.addBulk(again);
        o.onWaiting?.(
          `${again.length} jobs vanished from Redis at ${display} (restarted without persistence, ` +
            `flushed or evicted): sent again`,
        );
      }
    } catch {
      // Redis went away while we looked: the next look, or the grace period, decides.
    } finally {
      checking = false;
    }
  };

  return {
    name: `remote:${machine.key}`,
    machine,
    async measure(batch: readonly Candidate[], options: MeasureBatchOptions = {}) {
      const results: MeasureResult[] = new Array(batch.length);
      let left = batch.length;
      let lastResult = Date.now();
      let noticed = false;
      let lost: (e: Error) => void = () => {};
      const stop = () =>
        lost(new QueueStoppedError(`stopped: ${String(o.signal?.reason ?? "aborted")}`));
      const allDone = new Promise<void>((resolve, reject) => {
        lost = reject;
        if (left === 0) resolve();
        batch.forEach((_, i) => {
          waiting.set(`${token}-${next + i}`, (r) => {
            results[i] = r;
            lastResult = Date.now();
            noticed = false;
            options.onResult?.(i, r);
            if (--left === 0) resolve();
          });
        });
      });
      const ids = batch.map(() => `${token}-${next++}`);
      // A stop request (the first Ctrl-C) ends the wait at once: the jobs unfinished stay
      // unfinished in the records, and --resume measures them.
      if (o.signal?.aborted) stop();
      o.signal?.addEventListener("abort", stop);
      // Redis down for longer than the grace period: give up (the run is resumable).
      let downSince: number | undefined;
      const watch = setInterval(() => {
        // Its own connection, reconnecting as BullMQ's do: "ready" while Redis answers.
        if (redis.status === "ready") downSince = undefined;
        else downSince ??= Date.now();
        if (downSince !== undefined && Date.now() - downSince > graceMs) {
          lost(
            new QueueLostError(
              `lost the queue: Redis at ${display} unreachable for ${graceMs / 1000} s`,
            ),
          );
          return;
        }
        checkJobs();
        if (!noticed && Date.now() - lastResult > (o.waitNoticeSeconds ?? 15) * 1000) {
          noticed = true;
          o.onWaiting?.(
            `waiting for workers of ${machine.key} on ${display}: ${left} jobs unfinished`,
          );
        }
      }, 250);
      try {
        const jobs = batch.map((c, i) => {
          if (!c.trace) {
            throw new TypeError("The remote measurer sends traces: a candidate has none");
          }
          const data: MeasureJob = {
            version,
            trace: c.trace,
            options: {
              ...o.options,
              ...(options.cutoffSeconds !== undefined
                ? { cutoffSeconds: options.cutoffSeconds }
                : {}),
            },
          };
          return { name: "measure", data, opts: { jobId: ids[i] } };
        });
        await Promise.race([queue.addBulk(jobs), allDone]);
        for (const j of jobs) sent.set(j.opts.jobId, j);
        await allDone;
        return results;
      } finally {
        clearInterval(watch);
        o.signal?.removeEventListener("abort", stop);
        ids.forEach((id) => {
          waiting.delete(id);
          sent.delete(id);
        });
      }
    },
    async close() {
      await closeQueueClient([queue, events], redis);
    },
  };
}

/** The announcement of the machine to measure on; see {@link NoWorkerError}. */
export function pickMachine(
  values: string[],
  o: { target: string; version: string; key?: string; staleMs: number; display: string },
): Announcement {
  const fresh = liveAnnouncements(values, o.staleMs);
  const fit = fresh.filter((a) =>
    sameTarget(a.target, o.target) && a.version === o.version && (!o.key || a.key === o.key)
  );
  const keys = [...new Set(fit.map((a) => a.key))];
  if (keys.length === 1) return fit.find((a) => a.key === keys[0])!;
  if (keys.length > 1) {
    throw new NoWorkerError(
      `workers of several ${o.target} machines on ${o.display}: ${
        keys.join(", ")
      }; choose one with --machine KEY`,
    );
  }
  const other = fresh.filter((a) => sameTarget(a.target, o.target) && a.version !== o.version);
  throw new NoWorkerError(
    `no worker for target ${o.target}${
      o.key ? ` machine ${o.key}` : ""
    } and tunebook ${o.version} on ${o.display}` +
      (other.length
        ? ` (workers of tunebook ${
          [...new Set(other.map((a) => a.version))].join(", ")
        } refuse its jobs)`
        : "") +
      `; start one with: deno task worker --queue ${o.display}`,
  );
}

function failure(errorKind: MeasureResult["errorKind"], error: string): MeasureResult {
  return { errorKind, error, times: [], buildSeconds: 0, runSeconds: 0 };
}

async function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
