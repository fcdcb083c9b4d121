import assert from "node:assert/strict";
import { generateCuda } from "../ir/codegen_cuda.ts";
import { lower } from "../ir/lower.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { matmul } from "../ir/workloads.ts";
import { signatureOf } from "./kernel_source.ts";
import { pointerTable } from "./buffers.ts";
import { CUDA_MEASURE_SYMBOLS, cudaHarness } from "./cuda_harness.ts";
import { createNvccBuilder } from "./nvcc_builder.ts";
import { seededBuffers } from "./reference_cache.ts";

Deno.test("cudaHarness fills outputs with NaN and opts big dynamic shared memory in before the checked launch", () => {
  const text = cudaHarness({
    params: [{ size: 8, role: "input" }, { size: 4, role: "output" }],
    temps: [{ size: 2 }],
    launches: [{ name: "tb_k0", dynamicSharedBytes: 96 * 1024 }, { name: "tb_k1" }],
  });
  const memset = text.indexOf("cudaMemset(d[i], 0xff");
  const optIn = text.indexOf(
    "cudaFuncSetAttribute(tb_k0, cudaFuncAttributeMaxDynamicSharedMemorySize, 98304)",
  );
  const launch = text.indexOf("tb_launch(d)");
  assert.ok(memset > 0 && optIn > memset && launch > optIn, text);
  assert.ok(!text.includes("cudaFuncSetAttribute(tb_k1"), "48 KiB or less needs no opt-in");
  assert.match(text, /static const long tb_h_sizes\[3\] = \{8L, 4L, 2L\};/);
});

Deno.test("a program with the harness builds with nvcc and measures where the device status says", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-cuda-harness-" });
  try {
    const w = matmul(16, 12, 8);
    const sch = new Schedule(w, { prng: createPrng(0) });
    sch.bind("C", "i", "blockIdx.x");
    sch.bind("C", "j", "threadIdx.x");
    const kernel = lower(sch);
    const [b] = await createNvccBuilder({ cacheDir: dir }).build([{
      source: generateCuda(kernel) + cudaHarness(kernel),
    }]);
    assert.equal(b.errorKind, "none", b.error ?? "");
    const lib = Deno.dlopen(b.artifact!, CUDA_MEASURE_SYMBOLS);
    try {
      const count = lib.symbols.tb_cuda_device_count();
      const signature = signatureOf(w);
      const buffers = seededBuffers(signature, 1);
      buffers[2].fill(NaN);
      const times = new Float64Array(2), number = new Int32Array(1);
      const sizes = new BigInt64Array(signature.buffers.map((x) => BigInt(x.size)));
      const code = lib.symbols.tb_cuda_measure(
        pointerTable(buffers),
        sizes,
        3,
        2,
        2,
        0.5,
        1,
        times,
        number,
      );
      if (count <= 0) {
        // No driver (-35) or no device: an error code, nothing written.
        assert.notEqual(code, 0);
        assert.ok(buffers[2].every(Number.isNaN));
      } else {
        assert.equal(code, 0);
        const [A, B, C] = buffers;
        for (let i = 0; i < 16; i++) {
          for (let j = 0; j < 12; j++) {
            let s = 0;
            for (let k = 0; k < 8; k++) s += A[i * 8 + k] * B[k * 12 + j];
            assert.ok(Math.abs(C[i * 12 + j] - s) < 1e-4, `C[${i},${j}]`);
          }
        }
        assert.ok(times.every((t) => t > 0) && number[0] >= 2);
      }
    } finally {
      lib.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
