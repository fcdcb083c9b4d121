import assert from "node:assert/strict";
import { canonicalJSON, type Trace } from "../ir/trace.ts";
import { createWorkload } from "../ir/workloads.ts";
import type { CostModel } from "../costmodel/model.ts";
import { evolutionaryTraceSearch } from "./evolutionary_traces.ts";
import { defaultSpace } from "./sketch.ts";
import type { Candidate, Observation } from "./strategy.ts";

const space = defaultSpace(createWorkload("matmul", [128, 128, 64]));

/** A model that likes wide vector tiles: the decision of j's innermost tile. */
function innermostJ(c: Candidate): number {
  const inst = c.trace!.insts.find((i) =>
    i.op === "sample_perfect_tile" && i.args.loop === "j" && (i.args.stage === "C")
  );
  const d = inst?.decision as number[] | undefined;
  return d ? d[d.length - 1] : 0;
}
const likesWideTiles: CostModel = {
  name: "wide",
  update() {},
  predict: (cs) => cs.map(innermostJ),
};

Deno.test("evolutionary trace search is reproducible and never re-proposes", () => {
  const run = () => {
    const s = evolutionaryTraceSearch(space, { seed: 3, populationSize: 24 });
    const seen: string[] = [];
    for (let round = 0; round < 3; round++) {
      const cs = s.propose(6);
      const obs: Observation[] = cs.map((c, i) => ({
        candidate: c,
        errorKind: i === 0 ? "runtime_crash" : "none",
        seconds: i === 0 ? undefined : 1 + i,
      }));
      s.observe(obs);
      seen.push(...cs.map((c) => canonicalJSON(c.trace)));
    }
    return seen;
  };
  const a = run();
  assert.deepEqual(a, run());
  assert.equal(new Set(a).size, a.length);
});

Deno.test("the cost model steers the population", () => {
  const guided = evolutionaryTraceSearch(space, {
    seed: 1,
    populationSize: 32,
    model: likesWideTiles,
    epsilon: 0,
  });
  const plain = evolutionaryTraceSearch(space, { seed: 1, populationSize: 32 });
  const mean = (cs: Candidate[]) => cs.reduce((a, c) => a + innermostJ(c), 0) / cs.length;
  assert.ok(mean(guided.propose(8)) > mean(plain.propose(8)));
});

Deno.test("on the GPU space the evolutionary search keeps proposing GEMM template points when they measure faster", async () => {
  const { gpuSpace } = await import("./sketch_gpu.ts");
  const space = gpuSpace(createWorkload("matmul", [1024, 1024, 1024]));
  const s = evolutionaryTraceSearch(space, { seed: 2, populationSize: 32 });
  const gemm = (t: Trace) => t.insts.some((i) => i.op === "annotate");
  let count = 0;
  for (let round = 0; round < 4; round++) {
    const batch = s.propose(16);
    count += batch.filter((c) => gemm(c.trace!)).length;
    await s.observe(batch.map((c) => ({
      candidate: c,
      errorKind: "none" as const,
      seconds: gemm(c.trace!) ? 1e-3 : 1e-2,
    })));
  }
  // Before GEMM knobs could be mutated, children of GEMM points all failed and about 1 in 16 was one.
  assert.ok(count >= 16, `${count} of 64 proposals were GEMM template points`);
});
