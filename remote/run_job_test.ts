import assert from "node:assert/strict";
import { executeRunJob, parseRunJob, recordRun } from "./run_job.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import { runTrace } from "../tuner/run_strategy.ts";

const job = (run: Record<string, unknown> = {}) => ({
  version: "0.1.0",
  run: { space: "pnpoly_RTX_3090", absent: "invalid", strategy: "sa", seed: 1, budget: 20, ...run },
});

Deno.test("parseRunJob() takes a cache by name only, never a path", () => {
  assert.equal(parseRunJob(job()).run.space, "pnpoly_RTX_3090");
  assert.throws(() => parseRunJob(job({ space: "/etc/passwd" })), /not the name of a cache/);
  assert.throws(() => parseRunJob(job({ space: "../x" })), /not the name of a cache/);
  assert.throws(() => parseRunJob({ ...job(), command: "ls" }), /unknown field command/);
  assert.throws(() => parseRunJob(job({ budget: 0 })), /run.budget/);
});

Deno.test("a run made by executeRunJob() and written by recordRun() has the curve of the run itself", async () => {
  const spec = parseRunJob(job()).run;
  const result = await executeRunJob(spec);
  assert.equal(result.candidates.length, 20);
  const store = createMemoryRecordStore();
  const { runId } = await recordRun(store, {
    strategy: "sa",
    seed: 1,
    trials: 20,
    target: "replay",
    config: {},
    machine: {},
    compiler: "",
    tunebookVersion: "",
    workload: { name: "pnpoly_RTX_3090", shape: [], flops: 0 },
  }, result);
  const again = await executeRunJob(spec);
  assert.deepEqual(
    (await runTrace(store, runId)).best,
    again.candidates.map((_, i) =>
      Math.min(
        ...again.candidates.slice(0, i + 1).flatMap((c) =>
          c.result?.errorKind === "none" && c.result.seconds !== null ? [c.result.seconds] : []
        ),
      )
    ),
  );
});
