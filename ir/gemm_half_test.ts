/**
 * FP16 / BF16 inputs stored as 16-bit values in global memory (the GEMM
 * template's `halfInputs`): the plan, the generated sources, the PTX's
 * loads, and the OpenCL twin on PoCL against the reference.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { generateCuda } from "./codegen_cuda.ts";
import { openclProgram } from "./codegen_opencl.ts";
import { GEMM_DEFAULTS, type GemmKernel } from "./gemm_gpu.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { verifyGpu } from "./target_gpu.ts";
import { conv2d, denseBiasRelu, matmul, type Workload } from "./workloads.ts";
import { checkGpuSchedules, halfBits, OpenCLRuntime } from "../measure/opencl_runner.ts";
import { cudaHarness } from "../measure/cuda_harness.ts";

function gemm(w: Workload, over: Record<string, number>): Schedule {
  const sch = new Schedule(w, { prng: createPrng(0) });
  const stage = { matmul: "C", dense: "D", conv2d: "O" }[w.name]!;
  for (const [k, v] of Object.entries({ ...GEMM_DEFAULTS, ...over })) sch.annotate(stage, k, v);
  return sch;
}
const kernelOf = (sch: Schedule) => verifyGpu(sch).kernel as GemmKernel;
const small = { "gemm.block_m": 32, "gemm.block_n": 32, "gemm.warp_m": 16, "gemm.warp_n": 16 };

Deno.test("FP16 and BF16 mma with direct or register loads store A and B as 16-bit values; FP32, TF32 and cp.async do not", () => {
  const w = matmul(64, 64, 64);
  const storage = (mma: number, load: number) =>
    kernelOf(gemm(w, { ...small, "gemm.mma": mma, "gemm.load": load })).params.map((p) =>
      p.storage ?? "-"
    );
  assert.deepEqual(storage(2, 0), ["f16", "f16", "-"]);
  assert.deepEqual(storage(3, 1), ["bf16", "bf16", "-"]);
  for (const [mma, load] of [[0, 1], [1, 1], [2, 2], [3, 2]]) {
    assert.deepEqual(storage(mma, load), ["-", "-", "-"], `mma ${mma} load ${load}`);
  }
  // Dense keeps its bias in FP32; conv2d stores its input (B) and filters (A).
  const dense = kernelOf(gemm(denseBiasRelu(32, 32, 32), { ...small, "gemm.mma": 2 }));
  assert.deepEqual(dense.params.map((p) => p.storage ?? "-"), ["f16", "f16", "-", "-"]);
  const conv = kernelOf(gemm(conv2d(1, 8, 6, 6, 16, 3, 3, 1, 1), { ...small, "gemm.mma": 3 }));
  assert.deepEqual(conv.params.map((p) => p.storage ?? "-"), ["bf16", "bf16", "-"]);
});

Deno.test("the generated CUDA packs 16-bit inputs before the checked launch and reads them through ushort views", () => {
  const k = kernelOf(gemm(matmul(64, 64, 64), { ...small, "gemm.mma": 2, "gemm.load": 1 }));
  const cu = generateCuda(k);
  assert.match(cu, /const unsigned short \*T_Ah = \(const unsigned short \*\)T_A;/);
  assert.match(cu, /tb_h4\(T_Bh, src\)/);
  assert.match(cu, /tb_to_f16<<<16, 256>>>\(d\[0\], s, 4096L\);/);
  const harness = cudaHarness(k);
  const pack = harness.indexOf("tb_pack_inputs(d)"), nan = harness.indexOf("0xff");
  assert.ok(pack > 0 && pack < nan, "inputs are packed before the outputs are filled with NaN");
  const ocl = openclProgram(k);
  assert.match(ocl.source, /__global const ushort \*T_Ah = \(__global const ushort \*\)T_A;/);
  assert.deepEqual(ocl.buffers.map((b) => b.storage ?? "-"), ["f16", "f16", "-"]);
  // FP32 kernels are unchanged: no views, no packing.
  const f32 = generateCuda(kernelOf(gemm(matmul(64, 64, 64), small)));
  assert.ok(!f32.includes("pack_inputs") && !f32.includes("unsigned short *"));
});

Deno.test("halfBits rounds to nearest even as the GPU's conversions do", () => {
  const x = new Float32Array([1, 1 + 2 ** -11, 1 + 3 * 2 ** -11, -2.5, 65520, 1 + 2 ** -8]);
  assert.deepEqual([...halfBits(x, "f16")], [0x3c00, 0x3c00, 0x3c02, 0xc100, 0x7c00, 0x3c04]);
  const y = new Float32Array([1, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -2.5, NaN]);
  assert.deepEqual([...halfBits(y, "bf16")], [0x3f80, 0x3f80, 0x3f82, 0xc020, 0x7fc0]);
});

Deno.test("16-bit inputs match the reference on PoCL: FP16 and BF16, float4 and scalar loads, dense and conv2d", () => {
  const cases: [Workload, Record<string, number>][] = [
    [matmul(37, 29, 24), { ...small, "gemm.mma": 2, "gemm.load": 0 }],
    [matmul(37, 29, 23), { ...small, "gemm.mma": 3, "gemm.load": 1 }],
    [matmul(40, 64, 48), { ...small, "gemm.mma": 2, "gemm.load": 1, "gemm.split_k": 2 }],
    [denseBiasRelu(40, 36, 44), { ...small, "gemm.mma": 3, "gemm.load": 0 }],
    [conv2d(2, 4, 7, 7, 8, 3, 3, 1, 1), { ...small, "gemm.mma": 2, "gemm.load": 1 }],
  ];
  const schedules = cases.map(([w, over]) => gemm(w, over));
  const plans = schedules.map((s) => kernelOf(s).gemm);
  assert.ok(plans.every((p) => p.halfInputs));
  assert.ok(plans.some((p) => p.vecA === 4) && plans.some((p) => p.vecA === 1));
  const rt = OpenCLRuntime.open();
  try {
    const results = checkGpuSchedules(rt, schedules, { seed: 9 });
    assert.deepEqual(results.flatMap((r, i) => r.ok ? [] : [`case ${i}: ${r.message}`]), []);
  } finally {
    rt.close();
  }
});

Deno.test("nvcc compiles 16-bit-input kernels to 64-bit global loads of packed values", async () => {
  const k = kernelOf(gemm(matmul(256, 256, 256), { "gemm.mma": 2, "gemm.load": 1 }));
  const bf = kernelOf(gemm(matmul(256, 256, 256), { "gemm.mma": 3, "gemm.load": 0 }));
  const dir = await Deno.makeTempDir({ prefix: "tb_half_ptx_" });
  try {
    const cu = join(dir, "h.cu"), ptx = join(dir, "h.ptx");
    await Deno.writeTextFile(
      cu,
      generateCuda(k, { prefix: "h0" }) + "\n" + generateCuda(bf, { prefix: "h1" }),
    );
    const out = await new Deno.Command("nvcc", {
      args: ["-arch=sm_90", "-ptx", "-o", ptx, cu],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr).slice(0, 3000));
    const text = await Deno.readTextFile(ptx);
    for (const name of ["h0_k0", "h1_k0"]) {
      const body = text.split(/(?=\.visible \.entry )/).find((p) => p.includes(`.entry ${name}(`))!;
      assert.ok(body, name);
      assert.match(body, /ld\.global(\.nc)?\.v2\.(u32|b32)/, `${name}: 8-byte loads of 4 values`);
      assert.ok(!/ld\.global(\.nc)?\.v4\.f32/.test(body), `${name}: no FP32 global loads`);
      assert.match(body, /mma\.sync\.aligned\.m16n8k16/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
