import assert from "node:assert/strict";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import { KnobSpace } from "../ir/knobs.ts";
import type { Measurer } from "../measure/measurer.ts";
import { simulatedAnnealing } from "../search/annealing.ts";
import type { Observation, Strategy } from "../search/strategy.ts";
import { tune } from "./loop.ts";

const SPACE = new KnobSpace([
  { name: "x", kind: "other", options: [0, 1, 2, 3, 4, 5, 6, 7] },
  { name: "y", kind: "other", options: [0, 1, 2, 3] },
]);

async function run(margin: number) {
  const seen = new Set<string>();
  let again = 0;
  // Nearly flat: neighbours differ by 1%, within a 5% margin.
  const measurer: Measurer = {
    name: "fake",
    measure: (batch) =>
      Promise.resolve(batch.map((c) => {
        const key = c.knobs!.join(",");
        if (seen.has(key)) again++;
        seen.add(key);
        const [x, y] = c.knobs!;
        const s = 1e-3 * (1 + 0.01 * (Math.abs(x - 5) + Math.abs(y - 2)));
        return { errorKind: "none" as const, times: [s], buildSeconds: 0, runSeconds: 0 };
      })),
  };
  const sa = simulatedAnnealing(SPACE, { seed: 2, init: 2, remeasureMargin: margin });
  const told: Observation[] = [];
  const strategy: Strategy = {
    ...sa,
    name: sa.name,
    propose: (n) => sa.propose(n),
    observe: (o) => sa.observe(o),
    remeasure: () => sa.remeasure!(),
    observeRemeasured: (o) => {
      told.push(...o);
      return sa.observeRemeasured!(o);
    },
  };
  const store = createMemoryRecordStore();
  const workloadId = await store.upsertWorkload({ name: "x", shape: [32], flops: 1 });
  const runId = await store.startRun({
    strategy: "sa",
    seed: 2,
    trials: 12,
    target: "fake",
    workloadId,
    config: {},
    machine: {},
    compiler: "",
    tunebookVersion: "0",
  });
  const out = await tune({ strategy, measurer, store, runId, trials: 12, batchSize: 2 });
  return { out, again, told, counts: await store.counts(runId) };
}

Deno.test("the loop times again what a strategy asks for, tells it, and counts no trial", async () => {
  const r = await run(0.05);
  assert.ok(r.out.remeasured > 0, "sa asked for its incumbent");
  assert.equal(r.again, r.out.remeasured, "each re-measurement is one more measurer call");
  assert.equal(r.told.length, r.out.remeasured, "every figure goes back to the strategy");
  assert.ok(r.told.every((o) => o.errorKind === "none" && o.seconds! > 0));
  assert.equal(r.out.measured, 12);
  assert.equal(r.counts.measured, 12, "no record for a re-measurement");
  const off = await run(0);
  assert.equal(off.out.remeasured, 0);
  assert.equal(off.again, 0);
});
