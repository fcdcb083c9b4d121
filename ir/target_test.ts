import assert from "node:assert/strict";
import { isTargetKind, recordTarget, resolveTarget, TARGET_KINDS } from "./target.ts";
import { H100 } from "./target_gpu.ts";

Deno.test("resolveTarget: each kind's capabilities, the CPU's facts from the flags given", () => {
  const avx512 = resolveTarget("cpu", { flags: new Set(["avx2", "avx512f"]), cc: "gcc" });
  assert.deepEqual(
    [avx512.host, avx512.gpu, avx512.nvcc, avx512.replay, avx512.limits],
    [true, false, false, false, undefined],
  );
  assert.deepEqual(avx512.registers, { lanes: 16, registers: 32 });
  assert.equal(avx512.compiler.cc, "gcc");
  assert.ok(avx512.compiler.flags.includes("-fno-tree-loop-if-convert"));
  assert.equal(resolveTarget("cpu", { cc: "clang-14" }).compiler.openmp, "libomp.so.5");
  const opencl = resolveTarget("opencl");
  assert.deepEqual([opencl.gpu, opencl.nvcc, opencl.limits], [true, false, H100]);
  const small = { ...H100, maxThreadsPerBlock: 512 };
  assert.equal(resolveTarget("cuda", { gpu: small }).limits?.maxThreadsPerBlock, 512);
  assert.equal(resolveTarget("replay").tvmName, "replay");
  assert.equal(resolveTarget("cpu").tvmName, "c");
});

Deno.test("resolveTarget names the option and the value it refuses", () => {
  assert.throws(
    () => resolveTarget("tpu"),
    /^RangeError: target: expected one of cpu, cuda, opencl, replay, got "tpu"$/,
  );
  assert.throws(() => resolveTarget(undefined as unknown as string), /got undefined/);
  assert.equal(recordTarget("tpu"), undefined);
  assert.deepEqual(TARGET_KINDS.filter(isTargetKind), [...TARGET_KINDS]);
  assert.equal(isTargetKind(7), false);
});
