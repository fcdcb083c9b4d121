import assert from "node:assert/strict";
import { Queue, QueueEvents } from "npm:bullmq@6.7.0";
import { redisMissing, startRedis } from "./testing.ts";
import { startWorker } from "./queue_worker.ts";
import { createRemoteMeasurer } from "./remote_measurer.ts";
import { tunebookVersion } from "../datasets/machine.ts";
import { createWorkload } from "../ir/workloads.ts";
import { randomSearch } from "../search/random.ts";
import { defaultSpace } from "../search/sketch.ts";

const missing = redisMissing();
const opts = { ignore: missing !== undefined, sanitizeOps: false, sanitizeResources: false };
const timing = { number: 1, repeat: 2, minRepeatMs: 0, warmup: 1 };

Deno.test({
  ...opts,
  name: "a worker measures a remote batch in order, returning every repeat of each candidate",
  async fn() {
    const redis = await startRedis();
    const worker = await startWorker({ url: redis.url });
    const m = await createRemoteMeasurer({
      url: redis.url,
      options: { timing, timeoutSeconds: 10, inputSeed: 0 },
    });
    try {
      const w = createWorkload("matmul", [16, 16, 16]);
      const batch = randomSearch(defaultSpace(w), { seed: 1 }).propose(3);
      const seen: number[] = [];
      const results = await m.measure(batch, { onResult: (i) => seen.push(i) });
      assert.equal(results.length, 3);
      for (const r of results) {
        assert.equal(r.errorKind, "none", r.error ?? "");
        assert.equal(r.times.length, 2);
      }
      assert.deepEqual([...seen].sort(), [0, 1, 2]);
      assert.equal(worker.jobs, 3);
      assert.equal(m.machine.key, worker.key);
    } finally {
      await m.close!();
      await worker.close();
      await redis.stop();
    }
  },
});

Deno.test({
  ...opts,
  name: "a worker refuses a job from another tunebook version, and one carrying a command",
  async fn() {
    const redis = await startRedis();
    const worker = await startWorker({ url: redis.url });
    const connection = { host: "127.0.0.1", port: redis.port, maxRetriesPerRequest: null };
    const queue = new Queue(worker.queue, { connection });
    const events = new QueueEvents(worker.queue, { connection });
    try {
      await events.waitUntilReady();
      const failed = new Map<string, string>();
      const both = new Promise<void>((resolve) =>
        events.on("failed", ({ jobId, failedReason }) => {
          failed.set(jobId, failedReason);
          if (failed.size === 2) resolve();
        })
      );
      const job = {
        trace: { version: 1, workload: { name: "matmul", shape: [8, 8, 8] }, insts: [] },
        options: { timing, timeoutSeconds: 10, inputSeed: 0 },
      };
      await queue.add("measure", { ...job, version: "0.0.1-other" }, { jobId: "old" });
      await queue.add(
        "measure",
        { ...job, version: await tunebookVersion(), command: "touch /tmp/pwned" },
        { jobId: "cmd" },
      );
      await both;
      assert.match(failed.get("old")!, /comes from tunebook 0.0.1-other; this worker runs /);
      assert.match(failed.get("cmd")!, /unknown field command/);
      assert.equal(worker.jobs, 0);
    } finally {
      await events.close();
      await queue.close();
      await worker.close();
      await redis.stop();
    }
  },
});
