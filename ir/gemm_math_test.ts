import assert from "node:assert/strict";
import { ALL_MATH, comparableMath, mathOfTrace, mmaValues, parseMath } from "./gemm_math.ts";
import { GEMM_DEFAULTS } from "./gemm_gpu.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { traceOf } from "./trace.ts";
import { matmul } from "./workloads.ts";

Deno.test("parseMath reads a list of kinds in gemm.mma order and names an unknown one", () => {
  assert.deepEqual(parseMath("bf16, fp32,bf16"), ["fp32", "bf16"]);
  assert.deepEqual(parseMath("fp32,tf32,fp16,bf16"), [...ALL_MATH]);
  assert.throws(() => parseMath("fp32,tf33"), /from fp32, tf32, fp16, bf16; got "tf33"/);
  assert.throws(() => parseMath(""), /got ""/);
  assert.deepEqual(mmaValues(["tf32", "bf16"]), [1, 3]);
});

Deno.test("mathOfTrace reads a GEMM point's mma kind; loop nests are FP32", () => {
  const w = matmul(128, 128, 128);
  const sch = new Schedule(w, { prng: createPrng(0) });
  for (const [k, v] of Object.entries({ ...GEMM_DEFAULTS, "gemm.mma": 2 })) sch.annotate("C", k, v);
  assert.equal(mathOfTrace(traceOf(sch)), "fp16");
  const nest = new Schedule(w, { prng: createPrng(0) });
  nest.split("C", "i", [null, 4]);
  assert.equal(mathOfTrace(traceOf(nest)), "fp32");
});

Deno.test("comparableMath: FP32 against FP32 only; FP32 or TF32 against TF32; FP16/BF16 inputs against neither", () => {
  const table = ALL_MATH.map((k) => [k, comparableMath(k, "fp32"), comparableMath(k, "tf32")]);
  assert.deepEqual(table, [
    ["fp32", true, true],
    ["tf32", false, true],
    ["fp16", false, false],
    ["bf16", false, false],
  ]);
});
