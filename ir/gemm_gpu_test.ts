import assert from "node:assert/strict";
import { generateCuda } from "./codegen_cuda.ts";
import { openclProgram } from "./codegen_opencl.ts";
import { GEMM_DEFAULTS, type GemmKernel, gemmTolerance } from "./gemm_gpu.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { H100, verifyGpu } from "./target_gpu.ts";
import { assertTraceRoundTrip } from "./testing.ts";
import { conv2d, denseBiasRelu, matmul, type Workload } from "./workloads.ts";
import { checkGpuSchedules, OpenCLRuntime } from "../measure/opencl_runner.ts";

/** A GEMM template point: the defaults with `over` changed, annotated on the reduction stage. */
function gemm(w: Workload, over: Record<string, number> = {}): Schedule {
  const sch = new Schedule(w, { prng: createPrng(0) });
  const stage = { matmul: "C", dense: "D", conv2d: "O" }[w.name]!;
  const short = Object.fromEntries(Object.entries(over).map(([k, v]) => [`gemm.${k}`, v]));
  for (const [k, v] of Object.entries({ ...GEMM_DEFAULTS, ...short })) sch.annotate(stage, k, v);
  return sch;
}

const plan = (sch: Schedule) => (verifyGpu(sch).kernel as GemmKernel).gemm;

Deno.test("gemm template points lower to whole-warp launches that cover the output", () => {
  const { kernel, launches } = verifyGpu(gemm(matmul(1024, 1024, 1024)));
  assert.equal(launches.length, 1);
  assert.deepEqual(launches[0].grid, [8, 8, 1]);
  assert.deepEqual(launches[0].block, [256, 1, 1]);
  // Two buffers of A (transposed: 16 x (128 + 4)) and B (16 x (128 + 4)) floats.
  assert.equal(launches[0].dynamicSharedBytes, 2 * (16 * 132 + 16 * 132) * 4);
  const cp = verifyGpu(gemm(matmul(1024, 1024, 1024), { load: 2, stages: 3 }));
  // cp.async cannot transpose: A stays [m][k], 128 x (16 + 4).
  assert.equal(cp.launches[0].dynamicSharedBytes, 3 * (128 * 20 + 16 * 132) * 4);
  assert.deepEqual(kernel.params.map((p) => p.buf), ["T_A", "T_B", "T_C"]);
  const split = verifyGpu(gemm(matmul(64, 48, 1024), { block_m: 64, block_n: 32, split_k: 4 }));
  assert.deepEqual(split.launches.map((l) => l.grid), [[2, 1, 4], [12, 1, 1]]);
  assert.deepEqual(split.kernel.temps, [{ buf: "T_splitk", size: 4 * 64 * 48 }]);
  const conv = plan(gemm(conv2d(2, 64, 56, 56, 64, 3, 3, 1, 1)));
  assert.deepEqual([conv.M, conv.N, conv.K], [64, 2 * 56 * 56, 64 * 9]);
});

Deno.test("gemm template rejects configurations that break a limit, naming the knob", () => {
  const w = matmul(256, 256, 256);
  assert.throws(() => verifyGpu(gemm(w, { warp_m: 128, block_m: 64 })), /does not divide block/);
  assert.throws(
    () => verifyGpu(gemm(w, { block_m: 256, block_n: 256, warp_m: 16, warp_n: 32 })),
    /4096 threads per block exceed the 1024/,
  );
  assert.throws(
    () => verifyGpu(gemm(w, { warp_m: 128, warp_n: 64, lanes_n: 8 })),
    /256 accumulators per thread/,
  );
  assert.throws(
    () =>
      verifyGpu(
        gemm(w, { block_m: 256, block_n: 256, block_k: 32, load: 2, stages: 4, warp_m: 64 }),
      ),
    /bytes of shared memory exceed the 232448/,
  );
  assert.throws(() => verifyGpu(gemm(matmul(64, 64, 32), { split_k: 4 })), /split_k 4 exceeds/);
  assert.throws(() => verifyGpu(gemm(w, { mma: 2, block_k: 8 })), /not a multiple of the mma k 16/);
  assert.throws(() => verifyGpu(gemm(w, { block_m: 48 })), /gemm.block_m 48 is not one of/);
  assert.throws(
    () => verifyGpu(gemm(matmul(16384, 16384, 256), { split_k: 8 })),
    /needs 64-bit indices/,
  );
  const mixed = gemm(w);
  mixed.split("C", "i", [null, 4]);
  assert.throws(() => verifyGpu(mixed), /"split" cannot be combined with it/);
});

Deno.test("gemm template traces round-trip through JSON and replay", () => {
  assertTraceRoundTrip(gemm(matmul(64, 64, 64), { mma: 1, load: 2 }));
});

Deno.test("the CUDA launcher opts in to dynamic shared memory above 48 KiB, and only then", () => {
  const big = verifyGpu(gemm(matmul(1024, 1024, 1024), {
    block_n: 256,
    block_k: 32,
    load: 2,
    stages: 3,
    warp_n: 64,
  }));
  const bytes = big.launches[0].dynamicSharedBytes!;
  assert.ok(bytes > 48 * 1024);
  const cu = generateCuda(big.kernel);
  assert.ok(
    cu.includes(
      `cudaFuncSetAttribute(tb_k0, cudaFuncAttributeMaxDynamicSharedMemorySize, ${bytes})`,
    ),
  );
  assert.ok(cu.includes(`tb_k0<<<dim3(4, 8, 1), dim3(256, 1, 1), ${bytes}>>>`));
  const small = generateCuda(verifyGpu(gemm(matmul(256, 256, 256))).kernel);
  assert.ok(!small.includes("cudaFuncSetAttribute"));
  assert.ok(small.includes("extern __shared__ float4"));
});

Deno.test("float4 loads fall back to scalar ones when the contiguous extent is not a multiple of 4", () => {
  assert.deepEqual([plan(gemm(matmul(64, 64, 64))).vecA, plan(gemm(matmul(64, 64, 64))).vecB], [
    4,
    4,
  ]);
  const odd = plan(gemm(matmul(64, 30, 23)));
  assert.deepEqual([odd.vecA, odd.vecB], [1, 1]);
  const dense = plan(gemm(denseBiasRelu(64, 30, 24)));
  assert.deepEqual([dense.vecA, dense.vecB], [4, 4]);
  assert.equal(plan(gemm(conv2d(1, 4, 8, 8, 8, 3, 3, 1, 1))).vecB, 1);
});

/** Small odd shapes, every math kind, load kind, edge and epilogue. */
const CASES: [Workload, Record<string, number>][] = [
  [matmul(37, 29, 23), { block_m: 32, block_n: 32, warp_m: 16, warp_n: 16 }],
  [matmul(37, 29, 23), { block_m: 64, block_n: 32, warp_m: 32, warp_n: 16, load: 2, stages: 3 }],
  [matmul(70, 36, 40), { block_m: 64, block_n: 64, warp_m: 32, warp_n: 32, load: 0, lanes_n: 8 }],
  [matmul(70, 36, 40), { block_m: 32, block_n: 64, warp_m: 16, warp_n: 32, mma: 1, load: 2 }],
  [matmul(37, 29, 48), { block_m: 32, block_n: 32, warp_m: 32, warp_n: 16, mma: 1, load: 1 }],
  [matmul(33, 40, 36), { block_m: 64, block_n: 32, warp_m: 16, warp_n: 16, mma: 2, load: 2 }],
  [matmul(33, 40, 36), { block_m: 32, block_n: 32, warp_m: 32, warp_n: 32, mma: 3, load: 0 }],
  [matmul(20, 44, 100), { block_m: 32, block_n: 32, warp_m: 16, warp_n: 16, split_k: 4 }],
  [matmul(20, 44, 100), {
    block_m: 32,
    block_n: 32,
    warp_m: 16,
    warp_n: 16,
    mma: 1,
    split_k: 2,
    load: 2,
    stages: 4,
  }],
  [denseBiasRelu(37, 29, 23), { block_m: 32, block_n: 32, warp_m: 16, warp_n: 16, load: 2 }],
  [denseBiasRelu(40, 36, 44), { block_m: 32, block_n: 64, warp_m: 32, warp_n: 16, mma: 2 }],
  [denseBiasRelu(40, 36, 44), { block_m: 32, block_n: 32, warp_m: 16, warp_n: 16, split_k: 2 }],
  [conv2d(2, 3, 7, 9, 5, 3, 3, 2, 1), { block_m: 32, block_n: 32, warp_m: 16, warp_n: 16 }],
  [conv2d(1, 8, 9, 9, 16, 3, 3, 1, 1), {
    block_m: 32,
    block_n: 64,
    warp_m: 16,
    warp_n: 32,
    mma: 1,
    load: 2,
  }],
  [conv2d(2, 4, 6, 6, 8, 1, 1, 1, 0), { block_m: 32, block_n: 32, warp_m: 32, warp_n: 16, mma: 3 }],
];

Deno.test("gemm template kernels match the reference on PoCL: odd shapes, every math and load kind, split-K, dense and conv2d epilogues", () => {
  const schedules = CASES.map(([w, over]) => gemm(w, over));
  const plans = schedules.map(plan);
  // The cases cover what they claim.
  assert.deepEqual(new Set(plans.map((p) => p.mma)), new Set([0, 1, 2, 3]));
  assert.deepEqual(new Set(plans.map((p) => p.load)), new Set([0, 1, 2]));
  assert.ok(plans.some((p) => p.vecA === 4) && plans.some((p) => p.vecA === 1));
  const rt = OpenCLRuntime.open();
  try {
    const results = checkGpuSchedules(rt, schedules, { seed: 5 });
    const failures = results.flatMap((r, i) =>
      r.ok ? [] : [`case ${i} ${schedules[i].workload.name}: ${r.message}`]
    );
    assert.deepEqual(failures, []);
  } finally {
    rt.close();
  }
});

Deno.test("the OpenCL twin rounds tensor-core inputs as the hardware does: TF32 to nearest with ties away, FP16 and BF16 to nearest even", () => {
  // A = 1 + 2^-11 everywhere, B = 1: the product is K * round(A).
  const K = 16, w = matmul(16, 8, K);
  const a = new Float32Array(16 * K).fill(1 + 2 ** -11), b = new Float32Array(K * 8).fill(1);
  const expected = [K * (1 + 2 ** -11), K * (1 + 2 ** -10), K, K];
  const rt = OpenCLRuntime.open();
  try {
    [0, 1, 2, 3].forEach((mma) => {
      const { kernel } = verifyGpu(
        gemm(w, { block_m: 32, block_n: 32, block_k: 16, warp_m: 16, warp_n: 16, mma }),
      );
      const program = openclProgram(kernel);
      const built = rt.build(program.source);
      try {
        const [c] = rt.execute(built, program, [a, b]);
        assert.deepEqual(new Set(c), new Set([Math.fround(expected[mma])]), `mma ${mma}`);
      } finally {
        rt.release(built);
      }
    });
  } finally {
    rt.close();
  }
});

Deno.test("gemmTolerance is looser for tensor-core inputs and absent for FP32", () => {
  const k = (mma: number) => verifyGpu(gemm(matmul(64, 64, 64), { mma })).kernel;
  assert.equal(gemmTolerance(k(0)), undefined);
  assert.deepEqual(gemmTolerance(k(1)), { atol: 2e-3 * 8, rtol: 2e-3 });
  assert.ok(gemmTolerance(k(3))!.rtol > gemmTolerance(k(2))!.rtol);
  assert.equal(gemmTolerance(verifyGpu(gemm(matmul(64, 64, 64))).kernel), undefined);
  assert.equal(H100.maxSharedBytesPerBlockOptin, 227 * 1024);
});
