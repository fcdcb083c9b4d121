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

Deno.test("MutateAnnotation changes one GEMM knob of a GPU trace; the GPU space's postprocessor refuses what the target cannot run", async () => {
  const { gpuSpace, gemmSketch } = await import("./sketch_gpu.ts");
  const { Schedule } = await import("../ir/schedule.ts");
  const { traceOf } = await import("../ir/trace.ts");
  const { GEMM_DEFAULTS } = await import("../ir/gemm_gpu.ts");
  const w = createWorkload("matmul", [1024, 1024, 1024]);
  const space = gpuSpace(w, { gemmShare: 1 });
  const prng = createPrng(5);
  const knobs = (t: ReturnType<typeof traceOf>) =>
    t.insts.flatMap((i) =>
      i.op === "sample_categorical" ? [(i.args.candidates as number[])[i.decision as number]] : []
    );
  let legal = 0;
  for (let i = 0; i < 40; i++) {
    const t = space.sample(prng);
    assert.ok(mutable(t, "MutateAnnotation").length > 0);
    assert.deepEqual(mutable(t, "MutateTileSize"), []);
    const m = mutate(t, prng, (x, p) => space.postprocess!(x, p));
    if (!m) continue;
    legal++;
    // One knob changed, the rest as they were (a later one only where its options changed).
    const [a, b] = [knobs(t), knobs(m)];
    assert.equal(a.length, b.length);
    assert.ok(a.findIndex((v, k) => v !== b[k]) >= 0, "a knob changed");
  }
  assert.ok(legal >= 20, `${legal} of 40 mutations legal`);
  // FP16 mma needs k-steps of 16: with block_k 8 the plan is refused, though the loop nest lowers.
  const sch = new Schedule(w, { prng: createPrng(0) });
  gemmSketch(sch, undefined, undefined, { ...GEMM_DEFAULTS, "gemm.block_k": 8 });
  const t = traceOf(sch);
  const mma = t.insts.findIndex((i, k) =>
    i.op === "sample_categorical" && t.insts[k + 1].args.key === "gemm.mma"
  );
  t.insts[mma].decision = 2;
  assert.ok(verify(t, createPrng(0)), "the loop nest lowers");
  assert.equal(space.postprocess!(t, createPrng(0)), undefined);
});
