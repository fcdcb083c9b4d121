import assert from "node:assert/strict";
import { resolveTarget } from "../ir/target.ts";
import { conv2d, matmul } from "../ir/workloads.ts";
import {
  defaultTemplateOf,
  targetSketchSpace,
  targetTemplateSpace,
  templateNamesOf,
} from "./target_space.ts";
import { GPU_TEMPLATE_NAMES } from "./templates/registry_gpu.ts";

const AVX2 = resolveTarget("cpu", { flags: new Set(["avx2", "fma"]) });
const AVX512 = resolveTarget("cpu", { flags: new Set(["avx2", "avx512f"]) });

Deno.test("a target's templates: the GPU's on cuda and opencl, the CPU's on cpu, none on replay", () => {
  assert.deepEqual(templateNamesOf(resolveTarget("cuda")), GPU_TEMPLATE_NAMES);
  assert.deepEqual(templateNamesOf(resolveTarget("opencl")), GPU_TEMPLATE_NAMES);
  assert.ok(templateNamesOf(AVX2).includes("matmul-packed"));
  assert.deepEqual(templateNamesOf(resolveTarget("replay")), []);
  const w = conv2d(1, 16, 14, 14, 32, 3, 3, 1, 1);
  assert.equal(defaultTemplateOf(AVX2, w), "conv2d");
  assert.equal(defaultTemplateOf(resolveTarget("cuda"), w), "gemm-gpu");
  assert.equal(defaultTemplateOf(resolveTarget("replay"), w), undefined);
});

Deno.test("a template space counts the target's registers; a replayed target has none", () => {
  const w = conv2d(1, 64, 14, 14, 64, 3, 3, 1, 1);
  // The channel tile's register rule keeps fewer points with AVX2's 16 registers of 8 floats.
  const small = targetTemplateSpace(AVX2, "conv2d-nchwc", w).space;
  const big = targetTemplateSpace(AVX512, "conv2d-nchwc", w).space;
  let [a, b] = [0, 0];
  for (let i = 0; i < small.size; i++) {
    if (small.isValid(small.point(i))) a++;
    if (big.isValid(big.point(i))) b++;
  }
  assert.notEqual(a, b);
  assert.throws(
    () => targetTemplateSpace(resolveTarget("replay"), "matmul", w),
    /^RangeError: target/,
  );
  assert.throws(() => targetSketchSpace(resolveTarget("replay"), matmul(8, 8, 8)), /^RangeError/);
  const gpu = targetSketchSpace(resolveTarget("cuda"), matmul(256, 256, 256), { math: ["fp32"] });
  const cpu = targetSketchSpace(AVX2, matmul(256, 256, 256));
  assert.notDeepEqual(gpu.sketches, cpu.sketches);
});
