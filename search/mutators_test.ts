import assert from "node:assert/strict";
import { createPrng } from "../ir/prng.ts";
import { createWorkload } from "../ir/workloads.ts";
import { mutable, mutate, type MutatorName, verify } from "./mutators.ts";
import { defaultSpace } from "./sketch.ts";

Deno.test("mutate changes one decision and gives a legal, different schedule", () => {
  const space = defaultSpace(createWorkload("conv2d", [1, 16, 14, 14, 32, 3, 3, 1, 1]));
  const prng = createPrng(4);
  let legal = 0;
  for (let i = 0; i < 100; i++) {
    const t = space.sample(prng);
    const m = mutate(t, prng);
    if (!m) continue;
    legal++;
    assert.notDeepEqual(m, t);
    assert.equal(m.insts.length, t.insts.length);
    assert.deepEqual(verify(m, createPrng(0)), m, "a mutated trace replays to itself");
  }
  assert.ok(legal >= 80, `${legal} of 100 mutations legal`);
});

Deno.test("every mutator finds instructions it can change in the default space", () => {
  const space = defaultSpace(createWorkload("conv2d", [1, 16, 14, 14, 32, 3, 3, 1, 1]));
  const prng = createPrng(1);
  const found = new Set<MutatorName>();
  for (let i = 0; i < 40; i++) {
    const t = space.sample(prng);
    for (
      const m of [
        "MutateTileSize",
        "MutateParallel",
        "MutateUnroll",
        "MutateComputeLocation",
      ] as const
    ) {
      if (mutable(t, m).length > 0) found.add(m);
    }
  }
  assert.equal(found.size, 4);
});

Deno.test("MutateTileSize keeps the product of the tile and the innermost bound", () => {
  const space = defaultSpace(createWorkload("matmul", [256, 128, 64]));
  const prng = createPrng(7);
  for (let i = 0; i < 50; i++) {
    const t = space.sample(prng);
    const m = mutate(t, prng);
    if (!m) continue;
    m.insts.forEach((inst) => {
      if (inst.op !== "sample_perfect_tile") return;
      const d = inst.decision as number[];
      assert.ok(d[d.length - 1] <= (inst.args.max_innermost as number));
    });
  }
});
