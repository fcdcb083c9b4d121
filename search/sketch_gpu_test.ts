import assert from "node:assert/strict";
import { createPrng } from "../ir/prng.ts";
import { H100, verifyGpu } from "../ir/target_gpu.ts";
import { replayTrace } from "../ir/trace.ts";
import { isGemmKernel } from "../ir/gemm_gpu.ts";
import { conv2d, createWorkload, denseBiasRelu, matmul, type Workload } from "../ir/workloads.ts";
import { mathOfTrace } from "../ir/gemm_math.ts";
import { gpuSketchesOf, gpuSpace } from "./sketch_gpu.ts";

Deno.test("GPU sketches tile SSSRRSRS, bind blocks and threads, and pass verifyGpu", () => {
  const w = matmul(1024, 1024, 1024);
  assert.deepEqual(Object.keys(gpuSketchesOf(w)), [
    "SSSRRSRS+local+shared",
    "SSSRRSRS+local",
    "SSSRRSRS",
  ]);
  const space = gpuSpace(w, { gemmShare: 0 });
  const prng = createPrng(1);
  const seen = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const trace = space.sample(prng);
    const sch = replayTrace(trace, { prng: createPrng(0) });
    const { launches } = verifyGpu(sch);
    assert.equal(launches.length, 1);
    const threads = launches[0].block.reduce((a, b) => a * b, 1);
    assert.ok(threads >= 1 && threads <= 1024, `threads ${threads}`);
    const binds = trace.insts.filter((x) => x.op === "bind").map((x) => x.args.thread_axis);
    const copies = sch.stages.filter((s) => s.scope === "shared").length;
    assert.deepEqual(binds, [
      "blockIdx.x",
      "threadIdx.x",
      ...Array(copies).fill("threadIdx.x"),
    ]);
    assert.equal(launches[0].sharedBytes > 0, copies > 0);
    const local = sch.stages.find((s) => s.scope === "local");
    if (local) {
      // The register tile is computed at the thread loop: R R S R S inside it.
      assert.equal(local.attach.k, "at");
      assert.deepEqual(
        local.leaves.map((l) => l.kind).join(""),
        "reducereducespatialspatialreducespatialspatial",
      );
    }
    seen.add(copies ? "shared" : local ? "local" : "direct");
  }
  assert.deepEqual([...seen].toSorted(), ["direct", "local", "shared"]);
});

Deno.test("GPU sketches inline padding and put a reduction under its consumer's threads", () => {
  const prng = createPrng(3);
  const loops = { gemmShare: 0 };
  const conv = replayTrace(gpuSpace(conv2d(1, 16, 14, 14, 32, 3, 3, 1, 1), loops).sample(prng), {
    prng: createPrng(0),
  });
  assert.equal(conv.stage("P").attach.k, "inline");
  assert.equal(verifyGpu(conv).launches.length, 1);
  const dense = replayTrace(gpuSpace(denseBiasRelu(64, 128, 96), loops).sample(prng), {
    prng: createPrng(0),
  });
  const d = dense.stage("D");
  assert.equal(d.attach.k, "at");
  assert.equal(d.attach.k === "at" && d.attach.stage.name, "Y");
});

Deno.test("gpuSpace gives up with the last reason when no sample can be valid", () => {
  const space = gpuSpace(matmul(64, 64, 64), {
    target: { ...H100, maxThreadsPerBlock: 0 },
    maxAttempts: 5,
  });
  assert.throws(() => space.sample(createPrng(1)), /No valid GPU schedule of matmul in 5 samples/);
});

Deno.test("half of the default GPU space is the GEMM template; split-K only where blocks leave SMs idle", () => {
  const count = (w: Workload, share?: number) => {
    const space = gpuSpace(w, share === undefined ? {} : { gemmShare: share });
    const prng = createPrng(9);
    const plans = [];
    for (let i = 0; i < 60; i++) {
      const k = verifyGpu(replayTrace(space.sample(prng), { prng: createPrng(0) })).kernel;
      if (isGemmKernel(k)) plans.push(k.gemm);
    }
    return plans;
  };
  const big = count(matmul(4096, 4096, 4096));
  assert.ok(big.length >= 15 && big.length <= 45, `${big.length} of 60`);
  // 4096² outputs fill every SM with any block tile: no split-K.
  assert.ok(big.every((g) => g.splitK === 1));
  const skinny = count(matmul(128, 128, 8192));
  assert.ok(skinny.some((g) => g.splitK > 1));
  for (const g of skinny) {
    const blocks = Math.ceil(128 / g.blockM) * Math.ceil(128 / g.blockN);
    assert.ok(g.splitK === 1 || blocks * g.splitK <= 4 * 132);
  }
  assert.equal(count(matmul(256, 256, 256), 0).length, 0);
  assert.ok(count(denseBiasRelu(64, 128, 96)).length > 0);
  assert.ok(count(conv2d(1, 16, 14, 14, 32, 3, 3, 1, 1)).length > 0);
});

Deno.test("gpuSpace samples again when a sketch fails while sampling (threads above a shared copy's extent)", () => {
  // Seed 112 of matmul 1024³ once drew 16384 threads for an 8192-element shared copy of B.
  const space = gpuSpace(matmul(1024, 1024, 1024));
  for (let seed = 100; seed < 130; seed++) {
    const sch = replayTrace(space.sample(createPrng(seed)), { prng: createPrng(0) });
    verifyGpu(sch);
  }
});

Deno.test("gpuSpace's math limits the arithmetic: fp32 keeps the loop nests, no fp32 samples only the GEMM sketch", () => {
  const w = matmul(1024, 1024, 1024);
  const prng = createPrng(11);
  const kinds = (math: Parameters<typeof gpuSpace>[1]) => {
    const space = gpuSpace(w, math);
    return Array.from({ length: 48 }, () => space.sample(prng)).map((t) => ({
      math: mathOfTrace(t),
      gemm: isGemmKernel(verifyGpu(replayTrace(t, { prng: createPrng(0) })).kernel),
    }));
  };
  const fp32 = kinds({ math: ["fp32"] });
  assert.ok(fp32.every((k) => k.math === "fp32"));
  assert.ok(fp32.some((k) => k.gemm) && fp32.some((k) => !k.gemm), "both sketches");
  const tc = kinds({ math: ["tf32", "bf16"] });
  assert.ok(tc.every((k) => k.gemm && (k.math === "tf32" || k.math === "bf16")));
  assert.deepEqual(new Set(tc.map((k) => k.math)), new Set(["tf32", "bf16"]));
  assert.throws(
    () =>
      gpuSpace(createWorkload("depthwise_conv2d", [1, 8, 9, 9, 3, 3, 1, 1]), { math: ["tf32"] }),
    /depthwise_conv2d has no GEMM template, and its GPU kernels compute in fp32/,
  );
  assert.throws(() => gpuSpace(w, { math: [] }), /at least one kind/);
});
