import assert from "node:assert/strict";
import { canonicalJSON } from "../ir/trace.ts";
import { createPrng } from "../ir/prng.ts";
import { assertTraceRoundTrip } from "../ir/testing.ts";
import { lower } from "../ir/lower.ts";
import { replayTrace, withDecision } from "../ir/trace.ts";
import { createWorkload } from "../ir/workloads.ts";
import { randomSearch } from "./random.ts";
import { defaultSpace } from "./sketch.ts";

Deno.test("random search is reproducible by seed", () => {
  const space = defaultSpace(createWorkload("matmul", [128, 64, 96]));
  const a = randomSearch(space, { seed: 9 }).propose(10).map((c) => canonicalJSON(c.trace));
  const b = randomSearch(space, { seed: 9 }).propose(10).map((c) => canonicalJSON(c.trace));
  const c = randomSearch(space, { seed: 10 }).propose(10).map((c) => canonicalJSON(c.trace));
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  assert.ok(new Set(a).size > 5, "proposals differ from each other");
});

Deno.test("every sketch of the default space gives legal schedules on every workload", () => {
  const workloads = [
    createWorkload("matmul", [512, 512, 512]),
    createWorkload("matmul", [37, 29, 23]),
    createWorkload("dense", [64, 100, 48]),
    createWorkload("conv2d", [1, 64, 56, 56, 64, 3, 3, 1, 1]),
    createWorkload("conv2d", [1, 3, 224, 224, 64, 7, 7, 2, 3]),
  ];
  for (const w of workloads) {
    const space = defaultSpace(w);
    assert.deepEqual(
      space.sketches,
      w.name === "matmul"
        ? ["tile", "tile+cache", "tile+pack", "tile+pack+kc"]
        : ["tile", "tile+cache"],
    );
    const prng = createPrng(1);
    for (let i = 0; i < 60; i++) {
      const t = space.sample(prng);
      assert.doesNotThrow(() => lower(replayTrace(t, { prng: createPrng(0) })), `${w.name} #${i}`);
    }
  }
});

Deno.test("the tile+pack sketch samples packed register tiles; its decisions can change", () => {
  const space = defaultSpace(createWorkload("matmul", [100, 70, 50]));
  const prng = createPrng(3);
  let packed = 0;
  for (let i = 0; i < 30; i++) {
    const t = space.sample(prng);
    if (!t.insts.some((inst) => inst.op === "transform_layout")) continue;
    packed++;
    assertTraceRoundTrip(replayTrace(t, { prng: createPrng(0) }));
    // Another register tile height (a sampled decision) still gives a legal schedule.
    const mr = t.insts.findIndex((inst) => inst.op === "sample_categorical");
    const n = (t.insts[mr].args.candidates as number[]).length;
    const other = withDecision(t, mr, ((t.insts[mr].decision as number) + 1) % n);
    assert.doesNotThrow(() => lower(replayTrace(other, { prng: createPrng(0) })));
  }
  assert.ok(packed >= 5, `${packed} packed samples of 30`);
});
