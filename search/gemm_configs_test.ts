import assert from "node:assert/strict";
import { GEMM_KNOBS } from "../ir/gemm_gpu.ts";
import { mathOfTrace } from "../ir/gemm_math.ts";
import { createPrng } from "../ir/prng.ts";
import { replayTrace } from "../ir/trace.ts";
import { conv2d, createWorkload, denseBiasRelu, matmul } from "../ir/workloads.ts";
import { checkGpuSchedules, OpenCLRuntime } from "../measure/opencl_runner.ts";
import { GEMM_CONFIGS, gemmConfigs } from "./gemm_configs.ts";

Deno.test("gemmConfigs keeps the arithmetic a run allows, FP32 first, every value a knob option", () => {
  const w = matmul(4096, 4096, 4096);
  const all = gemmConfigs(w);
  assert.equal(all[0].name, "fp32-128x128x16-regs");
  assert.deepEqual(
    [...new Set(all.map((c) => mathOfTrace(c.candidate.trace!)))],
    ["fp32", "tf32", "fp16", "bf16"],
  );
  const fp32 = gemmConfigs(w, { math: ["fp32"] });
  assert.ok(fp32.length >= 3);
  assert.ok(fp32.every((c) => mathOfTrace(c.candidate.trace!) === "fp32"));
  const tf32 = gemmConfigs(w, { math: ["tf32"] });
  assert.deepEqual(tf32.map((c) => c.name), [
    "tf32-128x128x32-cp.async2",
    "tf32-128x256x32-cp.async3",
    "tf32-64x64x32-cp.async3",
  ]);
  for (const c of all) {
    for (const [k, v] of Object.entries(c.values)) {
      assert.ok(GEMM_KNOBS[k].includes(v), `${k} ${v}`);
    }
  }
  assert.equal(new Set(GEMM_CONFIGS.map((c) => c.name)).size, GEMM_CONFIGS.length);
});

Deno.test("gemmConfigs adds split-K where the blocks leave SMs idle, and leaves out half-empty tiles", () => {
  // 4096²: 1,024 blocks of 128x128, no split.
  assert.ok(gemmConfigs(matmul(4096, 4096, 4096)).every((c) => c.values["gemm.split_k"] === 1));
  // 1024²: 64 blocks of 128x128 on 132 SMs: split in 4 (256 blocks).
  const small = gemmConfigs(matmul(1024, 1024, 1024), { math: ["fp32"] });
  assert.deepEqual(small.slice(0, 2).map((c) => c.name), [
    "fp32-128x128x16-regs",
    "fp32-128x128x16-regs-splitk4",
  ]);
  // ResNet-18 conv2: M = 64 filters, so no 128-row tile; N = 3,136 pixels.
  const conv = gemmConfigs(conv2d(1, 64, 56, 56, 64, 3, 3, 1, 1), { math: ["fp32"] });
  assert.ok(conv.length > 0 && conv.every((c) => c.values["gemm.block_m"] === 64));
  assert.ok(conv.some((c) => c.values["gemm.split_k"] > 1));
  // Not a GEMM of the template: nothing to seed.
  assert.deepEqual(gemmConfigs(createWorkload("depthwise_conv2d", [1, 8, 9, 9, 3, 3, 1, 1])), []);
});

Deno.test("every GEMM configuration matches the reference on PoCL: matmul, dense and conv2d, odd sizes", () => {
  const schedules = [
    ...gemmConfigs(matmul(136, 260, 40)),
    ...gemmConfigs(denseBiasRelu(72, 132, 36)),
    ...gemmConfigs(conv2d(1, 4, 9, 9, 66, 3, 3, 1, 1)),
  ].map((c) => replayTrace(c.candidate.trace!, { prng: createPrng(0) }));
  assert.ok(schedules.length >= 20, `${schedules.length} configurations`);
  const rt = OpenCLRuntime.open();
  try {
    const bad = checkGpuSchedules(rt, schedules, { seed: 3 }).flatMap((r, i) =>
      r.ok ? [] : [`${i}: ${r.message}`]
    );
    assert.deepEqual(bad, []);
  } finally {
    rt.close();
  }
});
