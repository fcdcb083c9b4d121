import assert from "node:assert/strict";
import { comparisonSeconds, queueThroughput } from "../bench/distributed.ts";
import { redisMissing } from "../remote/testing.ts";

const missing = redisMissing();
if (missing) console.warn(missing);

Deno.test({
  name: "bench/distributed.ts measures queue throughput and a replayed comparison on one worker",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const q = await queueThroughput(40);
    assert.ok(q.jobsPerSecond > 0 && q.overheadMsPerJob > 0 && q.roundTripMs > 0);
    const s = await comparisonSeconds(
      ["--space", "pnpoly_RTX_3090", "--strategies", "random", "--seeds", "1", "--budget", "5"],
      1,
    );
    assert.ok(s > 0);
  },
});
