/**
 * The default GPU design space holds kernels that use what cuBLAS-class
 * kernels use, read from their PTX (nvcc -ptx): 64 random candidates of
 * matmul 1024³ are generated, compiled to PTX in one nvcc call, and each
 * kernel of the GEMM template is checked to use what its plan claims
 * (`ld.global.v4.f32` for float4 loads, `cp.async` for the asynchronous
 * pipeline, `mma.sync` of the sampled precision for tensor cores).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { generateCuda } from "../ir/codegen_cuda.ts";
import type { Kernel } from "../ir/ast.ts";
import { isGemmKernel } from "../ir/gemm_gpu.ts";
import { createPrng } from "../ir/prng.ts";
import { verifyGpu } from "../ir/target_gpu.ts";
import { replayTrace, type Trace } from "../ir/trace.ts";
import { conv2d, denseBiasRelu, matmul } from "../ir/workloads.ts";
import { randomSearch } from "../search/random.ts";
import { gpuSpace } from "../search/sketch_gpu.ts";

/** PTX text of every `.entry` of a PTX file, by kernel name. */
function entries(ptx: string): Map<string, string> {
  const out = new Map<string, string>();
  const parts = ptx.split(/(?=^\.visible \.entry |^\.entry )/m);
  for (const p of parts) {
    const m = p.match(/\.entry\s+(\w+)/);
    if (m) out.set(m[1], p);
  }
  return out;
}

/**
 * The PTX of `traces`' kernels, compiled in one nvcc call (`-O3` as tune
 * builds), by kernel name: `p<i>_k0` is trace i's main kernel.
 */
async function ptxOf(traces: Trace[]): Promise<{ kernels: Kernel[]; ptx: Map<string, string> }> {
  const kernels = traces.map((t) => verifyGpu(replayTrace(t, { prng: createPrng(0) })).kernel);
  const source = kernels.map((k, i) => generateCuda(k, { prefix: `p${i}` })).join("\n");
  const dir = await Deno.makeTempDir({ prefix: "tb_ptx_" });
  try {
    const cu = join(dir, "all.cu"), ptx = join(dir, "all.ptx");
    await Deno.writeTextFile(cu, source);
    const out = await new Deno.Command("nvcc", {
      args: ["-arch=sm_90", "-O3", "-ptx", "-o", ptx, cu],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr).slice(0, 4000));
    return { kernels, ptx: entries(await Deno.readTextFile(ptx)) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("64 random candidates of the default GPU space of matmul 1024³ (and 8 of dense and conv2d) use float4 loads, cp.async and mma.sync, each as its plan claims", async () => {
  const w = matmul(1024, 1024, 1024);
  const cands = randomSearch(gpuSpace(w), { seed: 1 }).propose(64);
  assert.equal(cands.length, 64);
  // Dense (bias + ReLU epilogue) and ResNet-18's conv2 (implicit GEMM) on the same machinery.
  for (const other of [denseBiasRelu(1024, 1024, 1024), conv2d(1, 64, 56, 56, 64, 3, 3, 1, 1)]) {
    cands.push(...randomSearch(gpuSpace(other), { seed: 2 }).propose(8));
  }
  const { kernels, ptx: byName } = await ptxOf(cands.map((c) => c.trace!));
  const seen = { v4: 0, cpAsync: 0, mma: 0, gemm: 0 };
  kernels.forEach((k, i) => {
    const text = byName.get(`p${i}_k0`);
    assert.ok(text, `no PTX entry p${i}_k0`);
    if (i < 64 && /ld\.global\.v4\.f32/.test(text)) seen.v4++;
    if (i < 64 && /cp\.async/.test(text)) seen.cpAsync++;
    if (i < 64 && /mma\.sync/.test(text)) seen.mma++;
    if (!isGemmKernel(k)) return;
    if (i < 64) seen.gemm++;
    const g = k.gemm;
    const type = ["", "tf32.tf32", "f16.f16", "bf16.bf16"][g.mma];
    assert.equal(text.includes(`mma.sync.aligned`), g.mma !== 0, `p${i}: mma ${g.mma}`);
    if (g.mma !== 0) assert.ok(text.includes(`.f32.${type}.f32`), `p${i}: mma type ${type}`);
    if (g.mma === 1) assert.ok(text.includes("cvt.rna.tf32.f32"), `p${i}: TF32 rounding`);
    assert.equal(/cp\.async\.c[ag]\.shared\.global/.test(text), g.load === 2, `p${i}: load`);
    if (g.load === 2) assert.ok(text.includes("cp.async.wait_group"), `p${i}: wait_group`);
    if (g.load !== 2 && g.vecA === 4 && !g.halfInputs) {
      assert.ok(text.includes("ld.global.v4.f32"), `p${i}: float4 loads`);
    }
    // FP16 / BF16 inputs stored as 16-bit values: four of them per 8-byte load.
    if (g.halfInputs && g.vecA === 4) {
      assert.match(text, /ld\.global(\.nc)?\.v2\.(u32|b32)/, `p${i}: packed 16-bit loads`);
    }
    if (g.mma === 0) assert.ok(text.includes("ld.shared.v4.f32"), `p${i}: float4 shared loads`);
  });
  console.log(`PTX of 64 candidates of matmul 1024³: ${JSON.stringify(seen)}`);
  assert.ok(seen.gemm >= 16, `only ${seen.gemm} GEMM template kernels`);
  assert.ok(seen.v4 > 0 && seen.cpAsync > 0 && seen.mma > 0, JSON.stringify(seen));
});

Deno.test("the FP32 GEMM configurations read shared memory only as float4, 16 FMAs per ld.shared.v4 for 8x8 outputs per thread", async () => {
  const { gemmConfigs } = await import("../search/gemm_configs.ts");
  const configs = gemmConfigs(matmul(4096, 4096, 4096), { math: ["fp32"] });
  const { ptx: byName } = await ptxOf(configs.map((c) => c.candidate.trace!));
  const count = (text: string, re: RegExp) => text.match(re)?.length ?? 0;
  configs.forEach((c, i) => {
    const text = byName.get(`p${i}_k0`)!;
    const fma = count(text, /fma\.rn\.f32/g), lds4 = count(text, /ld\.shared\.v4\.f32/g);
    assert.equal(count(text, /ld\.shared\.f32/g), 0, `${c.name}: scalar shared loads`);
    const perThread = c.values["gemm.warp_m"] * c.values["gemm.warp_n"] / 32;
    // Per k: (rows + columns of the thread's tile) / 4 float4s feed rows x columns FMAs.
    const rows = c.values["gemm.warp_m"] / (32 / c.values["gemm.lanes_n"]);
    const cols = c.values["gemm.warp_n"] / c.values["gemm.lanes_n"];
    assert.equal(rows * cols, perThread);
    assert.equal(fma / lds4, perThread / ((rows + cols) / 4), `${c.name}: ${fma} / ${lds4}`);
    if (perThread === 64) assert.equal(fma / lds4, 16, c.name);
  });
});
