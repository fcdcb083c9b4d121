import assert from "node:assert/strict";
import { createPrng } from "../../ir/prng.ts";
import { verifyGpu } from "../../ir/target_gpu.ts";
import { replayTrace } from "../../ir/trace.ts";
import { conv2d, denseBiasRelu, matmul } from "../../ir/workloads.ts";
import type { GemmKernel } from "../../ir/gemm_gpu.ts";
import {
  defaultGpuTemplate,
  GPU_TEMPLATE_NAMES,
  gpuTemplateSpace,
  MAX_REGISTER_TILE,
  pointShape,
} from "./registry_gpu.ts";

Deno.test("GPU templates: knobs, valid points within the thread limit, traces that verify", () => {
  assert.deepEqual(GPU_TEMPLATE_NAMES, ["matmul-gpu", "conv2d-gpu", "gemm-gpu"]);
  const cases = [
    ["matmul-gpu", matmul(256, 512, 128)],
    ["conv2d-gpu", conv2d(1, 64, 56, 56, 64, 3, 3, 1, 1)],
  ] as const;
  const prng = createPrng(11);
  for (const [name, w] of cases) {
    assert.equal(defaultGpuTemplate(w), "gemm-gpu");
    const t = gpuTemplateSpace(name, w);
    let valid = 0;
    for (let n = 0; n < 400 && valid < 10; n++) {
      const p = t.space.point(prng.int(t.space.size));
      const v = t.space.values(p);
      const shape = pointShape(name, v);
      if (!t.space.isValid(p)) {
        assert.ok(
          shape.threads > 1024 || shape.tile > MAX_REGISTER_TILE || shape.sharedBytes > 48 * 1024,
        );
        continue;
      }
      assert.equal(shape.tile, tileOf(v));
      valid++;
      const c = t.candidateOf(p);
      assert.deepEqual(c.knobs, p);
      const { launches } = verifyGpu(replayTrace(c.trace!, { prng: createPrng(0) }));
      const block = launches[0].block;
      assert.equal(block[0] * block[1] * block[2], shape.threads);
      assert.equal(launches[0].sharedBytes, shape.sharedBytes);
    }
    assert.equal(valid, 10, `${name}: too few valid points`);
  }
  assert.deepEqual(
    gpuTemplateSpace("matmul-gpu", matmul(64, 64, 64)).space.knobs.map((k) => k.name),
    [
      "tile_i",
      "tile_j",
      "tile_k",
      "auto_unroll",
      "unroll_explicit",
      "shared",
    ],
  );
  assert.throws(
    () => gpuTemplateSpace("conv2d-gpu", matmul(8, 8, 8)),
    /schedules conv2d, not matmul/,
  );
  assert.throws(() => gpuTemplateSpace("nope", matmul(8, 8, 8)), /Unknown GPU template "nope"/);
});

/** Register-tile floats of a point (product of the innermost spatial factors). */
function tileOf(v: Record<string, unknown>): number {
  return Object.entries(v)
    .filter(([k]) => ["tile_i", "tile_j", "tile_f", "tile_y", "tile_x"].includes(k))
    .reduce((p, [, f]) => p * (f as number[])[3], 1);
}

Deno.test("gemm-gpu: the GEMM template's knobs for matmul, dense and conv2d; valid points verify with the plan they name", () => {
  const prng = createPrng(5);
  for (
    const w of [
      matmul(1024, 1024, 1024),
      denseBiasRelu(512, 256, 384),
      conv2d(1, 64, 56, 56, 64, 3, 3, 1, 1),
    ]
  ) {
    const t = gpuTemplateSpace("gemm-gpu", w);
    assert.ok(t.space.knobs.some((k) => k.name === "mma"));
    let valid = 0, invalid = 0;
    for (let n = 0; n < 200; n++) {
      const p = t.space.point(prng.int(t.space.size));
      if (!t.space.isValid(p)) {
        invalid++;
        continue;
      }
      valid++;
      const v = t.space.values(p);
      const { kernel } = verifyGpu(replayTrace(t.candidateOf(p).trace!, { prng: createPrng(0) }));
      const g = (kernel as GemmKernel).gemm;
      assert.deepEqual([g.blockM, g.blockN, g.mma, g.splitK], [
        v.block_m,
        v.block_n,
        v.mma,
        v.split_k,
      ]);
    }
    assert.ok(valid >= 20 && invalid > 0, `${w.name}: ${valid} valid, ${invalid} invalid`);
  }
});

Deno.test("gpuTemplateSpace's math limits gemm-gpu's mma knob; the loop-nest templates need fp32", () => {
  const w = matmul(256, 256, 256);
  const mma = (t: ReturnType<typeof gpuTemplateSpace>) =>
    t.space.knobs.find((k) => k.name === "mma")!.options;
  assert.deepEqual(mma(gpuTemplateSpace("gemm-gpu", w)), [0, 1, 2, 3]);
  assert.deepEqual(mma(gpuTemplateSpace("gemm-gpu", w, { math: ["fp32", "tf32"] })), [0, 1]);
  assert.deepEqual(mma(gpuTemplateSpace("gemm-gpu", w, { math: ["bf16"] })), [3]);
  assert.ok(gpuTemplateSpace("matmul-gpu", w, { math: ["fp32"] }).space.size > 0);
  assert.throws(
    () => gpuTemplateSpace("matmul-gpu", w, { math: ["tf32"] }),
    /Template "matmul-gpu" computes in fp32, which math tf32 leaves out/,
  );
});
