import assert from "node:assert/strict";
import { createNvccBuilder } from "../measure/nvcc_builder.ts";
import { generateCuda } from "./codegen_cuda.ts";
import { generateC } from "./codegen_c.ts";
import { openclProgram } from "./codegen_opencl.ts";
import { createPrng } from "./prng.ts";
import { Schedule } from "./schedule.ts";
import { verifyGpu } from "./target_gpu.ts";
import { registerTiledMatmul, sharedTileMatmul } from "./testing_gpu.ts";
import { conv2d } from "./workloads.ts";

/** A 128x96x64 matmul: 16x16 threads per block, a 4x2 register tile, k unrolled by 8. */
const boundMatmul = () =>
  registerTiledMatmul(128, 96, 64, { threads: [16, 16], tile: [4, 2], kInner: 8 });

Deno.test("a bound matmul becomes a __global__ kernel with its launch and a host entry", () => {
  const { kernel, launches } = verifyGpu(boundMatmul());
  assert.deepEqual(launches.map((l) => [l.name, l.grid, l.block]), [
    ["tb_k0", [3, 2, 1], [16, 16, 1]],
  ]);
  const cu = generateCuda(kernel);
  assert.match(
    cu,
    /extern "C" __global__ void __launch_bounds__\(256\) tb_k0\(float \*__restrict__ T_A/,
  );
  assert.match(cu, /const int v_C_i_0 = blockIdx\.y;/);
  assert.match(cu, /const int v_C_j_1 = threadIdx\.x;/);
  assert.match(cu, /float T_C_local\[8\];/, "the accumulator is a per-thread array");
  assert.match(cu, /#pragma unroll\n\s*for \(int v_C_local_k_1 = 0; v_C_local_k_1 < 8;/);
  assert.ok(cu.includes("tb_k0<<<dim3(3, 2, 1), dim3(16, 16, 1)>>>(d[0], d[1], d[2]);"));
  assert.ok(cu.includes('extern "C" int tb_cuda_run(float **host_bufs, const long *sizes'));
  assert.ok(cu.includes('extern "C" int tb_cuda_device_count(void)'));
  assert.ok(cu.includes("cudaEventElapsedTime"));
  // No C loop is left for a bound loop.
  assert.doesNotMatch(cu, /for \(int v_C_(i|j)_[01] /);
  // The C code of the same schedule keeps the bound loops as serial loops.
  assert.match(generateC(kernel), /for \(int v_C_j_1 = 0; v_C_j_1 < 16; \+\+v_C_j_1\)/);
});

Deno.test("the OpenCL twin reads group and local ids where CUDA reads blockIdx and threadIdx", () => {
  const { kernel } = verifyGpu(boundMatmul());
  const p = openclProgram(kernel);
  assert.match(p.source, /__kernel void tb_k0\(__global float \*restrict T_A/);
  assert.match(p.source, /const int v_C_i_0 = \(int\)get_group_id\(1\);/);
  assert.match(p.source, /const int v_C_j_1 = \(int\)get_local_id\(0\);/);
  assert.deepEqual(p.launches[0].grid, [3, 2, 1]);
  assert.deepEqual(p.buffers.map((b) => [b.buf, b.role]), [
    ["T_A", "input"],
    ["T_B", "input"],
    ["T_C", "output"],
  ]);
});

Deno.test("each root stage is its own kernel with its own launch; temporaries live on the device", () => {
  const sch = new Schedule(conv2d(1, 3, 7, 7, 4, 3, 3, 1, 1), { prng: createPrng(0) });
  sch.bind("P", "c", "blockIdx.x");
  sch.bind("P", "y", "threadIdx.x");
  sch.bind("O", "f", "blockIdx.x");
  sch.bind("O", "y", "threadIdx.y");
  sch.bind("O", "x", "threadIdx.x");
  const { kernel, launches } = verifyGpu(sch);
  assert.deepEqual(launches.map((l) => [l.stage, l.grid, l.block]), [
    ["P", [3, 1, 1], [9, 1, 1]],
    ["O", [4, 1, 1], [7, 7, 1]],
  ]);
  const cu = generateCuda(kernel, { prefix: "conv" });
  assert.ok(cu.includes("conv_k0<<<dim3(3, 1, 1), dim3(9, 1, 1)>>>"));
  assert.ok(cu.includes("conv_k1<<<dim3(4, 1, 1), dim3(7, 7, 1)>>>"));
  assert.ok(cu.includes("cudaMalloc((void **)&d[3]"), "the padded temporary lives on the device");
  assert.throws(() => generateCuda(kernel, { prefix: "bad prefix" }), TypeError);
});

Deno.test("nvcc compiles the generated CUDA; ptxas resources come back with the build", async () => {
  const cacheDir = await Deno.makeTempDir({ prefix: "tb-cuda-" });
  try {
    const builder = createNvccBuilder({ cacheDir, parallel: 1 });
    const source = generateCuda(verifyGpu(boundMatmul()).kernel);
    const [r] = await builder.build([{ source }]);
    assert.equal(r.errorKind, "none", r.error ?? "");
    assert.equal(r.cached, false);
    assert.equal(r.resources.length, 1);
    const [res] = r.resources;
    assert.equal(res.kernel, "tb_k0");
    assert.ok(res.registers > 0 && res.registers <= 255, `registers ${res.registers}`);
    assert.equal(res.sharedBytes, 0);
    assert.equal(res.spillStores, 0);
    assert.equal(res.spillLoads, 0);
    const [again] = await builder.build([{ source }]);
    assert.equal(again.cached, true);
    assert.deepEqual(again.resources, r.resources);
    assert.match(await builder.describe(), /release \d+\.\d+.*-arch=sm_90/);
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
  }
});

Deno.test("shared tiles: __shared__ arrays, barriers, and ptxas reports the shared memory", async () => {
  const { kernel } = verifyGpu(sharedTileMatmul());
  const cu = generateCuda(kernel);
  assert.match(cu, /^ {2}__shared__ float T_A_shared\[256\];$/m);
  assert.match(cu, /^ {2}__shared__ float T_B_shared\[256\];$/m);
  assert.equal(cu.match(/__syncthreads\(\);/g)?.length, 4);
  const cl = openclProgram(kernel).source;
  assert.match(cl, /^ {2}__local float T_A_shared\[256\];$/m);
  assert.equal(cl.match(/barrier\(CLK_LOCAL_MEM_FENCE\);/g)?.length, 4);
  const cacheDir = await Deno.makeTempDir({ prefix: "tb-cuda-" });
  try {
    const [r] = await createNvccBuilder({ cacheDir }).build([{ source: cu }]);
    assert.equal(r.errorKind, "none", r.error ?? "");
    assert.equal(r.resources[0].sharedBytes, 2048);
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
  }
});
