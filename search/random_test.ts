import assert from "node:assert/strict";
import { canonicalJSON } from "../ir/trace.ts";
import { createPrng } from "../ir/prng.ts";
import { lower } from "../ir/lower.ts";
import { replayTrace } from "../ir/trace.ts";
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
    assert.deepEqual(space.sketches, ["tile", "tile+cache"]);
    const prng = createPrng(1);
    for (let i = 0; i < 60; i++) {
      const t = space.sample(prng);
      assert.doesNotThrow(() => lower(replayTrace(t, { prng: createPrng(0) })), `${w.name} #${i}`);
    }
  }
});
