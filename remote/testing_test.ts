import assert from "node:assert/strict";
import { Queue, QueueEvents, Worker } from "npm:bullmq@6.7.0";
import pg from "npm:pg@8.23.1";
import { postgresMissing, redisMissing, startPostgres, startRedis } from "./testing.ts";

const noRedis = redisMissing();
const noPostgres = postgresMissing();
if (noRedis) console.warn(noRedis);
if (noPostgres) console.warn(noPostgres);

Deno.test({
  name: "BullMQ runs in Deno: 20 jobs added, processed by a worker, results seen by QueueEvents",
  ignore: noRedis !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const redis = await startRedis();
    const connection = { host: "127.0.0.1", port: redis.port, maxRetriesPerRequest: null };
    const queue = new Queue("smoke", { connection });
    const events = new QueueEvents("smoke", { connection });
    const worker = new Worker("smoke", (job) => Promise.resolve(job.data.x * 2), {
      connection,
      concurrency: 1,
    });
    try {
      await events.waitUntilReady();
      const results = new Map<string, number>();
      const all = new Promise<void>((resolve) => {
        events.on("completed", ({ jobId, returnvalue }) => {
          results.set(jobId, Number(returnvalue));
          if (results.size === 20) resolve();
        });
      });
      const jobs = await queue.addBulk(
        Array.from({ length: 20 }, (_, x) => ({ name: "double", data: { x } })),
      );
      await all;
      assert.deepEqual(jobs.map((j) => results.get(j.id!)), jobs.map((_, x) => 2 * x));
    } finally {
      await worker.close();
      await events.close();
      await queue.close();
      await redis.stop();
    }
  },
});

Deno.test({
  name: "startRedis() binds 127.0.0.1 and restart() keeps the append-only data",
  ignore: noRedis !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const redis = await startRedis({ appendOnly: true });
    const connection = { host: "127.0.0.1", port: redis.port, maxRetriesPerRequest: null };
    try {
      const queue = new Queue("keep", { connection });
      await queue.add("a", { x: 1 });
      await queue.close();
      await redis.halt();
      await redis.restart();
      const again = new Queue("keep", { connection });
      assert.equal(await again.count(), 1);
      await again.close();
      const conf = await Deno.readTextFile(`${redis.dir}/redis.log`);
      assert.match(conf, /Ready to accept connections/);
    } finally {
      await redis.stop();
    }
  },
});

Deno.test({
  name: "startPostgres() starts a cluster a pg client can query, and stop() removes it",
  ignore: noPostgres !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const server = await startPostgres();
    try {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      const r = await client.query("SELECT 1 + 1 AS two");
      assert.equal(r.rows[0].two, 2);
      await client.end();
    } finally {
      await server.stop();
    }
    assert.equal(await Deno.stat(server.dir).then(() => true, () => false), false);
  },
});
