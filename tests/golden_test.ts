/**
 * Golden kernels: the trace and the generated code of a handful of fixed
 * candidates, compared byte for byte with the files in `tests/golden/`, so a
 * change to the templates or to code generation shows in review as a diff of
 * those files.
 *
 * CPU cases are template points (the first valid point from 37% into the
 * space) with the vector width fixed (16 lanes, 32 registers; the matmul also
 * with 8 lanes, 16 registers), never read from the machine, so the files are
 * the same on AVX-512 and AVX2 CPUs. GPU cases are GEMM configurations
 * (`search/gemm_configs.ts`) and a `matmul-gpu` template point, as CUDA and
 * their OpenCL twin.
 *
 * When a change to the generated code is meant, rewrite the files and review
 * the diff:
 *
 *     deno task golden
 *
 * (the same as `TUNEBOOK_GOLDEN=update deno test --allow-read --allow-write
 * --allow-env tests/golden_test.ts`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { generateC, type VectorLanes } from "../ir/codegen_c.ts";
import { generateCuda } from "../ir/codegen_cuda.ts";
import { openclProgram } from "../ir/codegen_opencl.ts";
import { lower } from "../ir/lower.ts";
import { createPrng } from "../ir/prng.ts";
import { verifyGpu } from "../ir/target_gpu.ts";
import { canonicalJSON, replayTrace, type Trace } from "../ir/trace.ts";
import { conv2d, createWorkload, denseBiasRelu, matmul, type Workload } from "../ir/workloads.ts";
import { gemmConfigs } from "../search/gemm_configs.ts";
import { templateSpace } from "../search/templates/registry.ts";
import { gpuTemplateSpace } from "../search/templates/registry_gpu.ts";
import type { TemplateSpace } from "../search/templates/registry.ts";

const DIR = new URL("./golden/", import.meta.url).pathname;
const UPDATE = Deno.env.get("TUNEBOOK_GOLDEN") === "update";

/**
 * The first valid point from 37% into a template's space whose knobs take the
 * values in `set`, as a trace.
 */
function fixedPoint(t: TemplateSpace, set: Record<string, unknown> = {}): Trace {
  const start = Math.floor(t.space.size * 0.37);
  for (let i = 0; i < t.space.size; i++) {
    const point = t.space.point((start + i) % t.space.size);
    const values = t.space.values(point);
    const matches = Object.entries(set).every(([k, v]) => values[k] === v);
    if (matches && t.space.isValid(point)) return t.candidateOf(point).trace!;
  }
  throw new Error(`no valid point in ${t.name}`);
}

const REGS: Record<VectorLanes, { lanes: VectorLanes; registers: number }> = {
  16: { lanes: 16, registers: 32 },
  8: { lanes: 8, registers: 16 },
};

interface CpuCase {
  name: string;
  template: string;
  workload: Workload;
  lanes: VectorLanes;
  /** Knob values the point must have. */
  set?: Record<string, unknown>;
}

const VEC = { vectorize: 1, cache_write: 1, parallel: 1 };

const CPU_CASES: CpuCase[] = [
  { name: "matmul_l16", template: "matmul", workload: matmul(64, 64, 64), lanes: 16, set: VEC },
  { name: "matmul_l8", template: "matmul", workload: matmul(64, 64, 64), lanes: 8, set: VEC },
  {
    name: "matmul_packed_l16",
    template: "matmul-packed",
    workload: matmul(96, 96, 64),
    lanes: 16,
  },
  {
    name: "dense_bias_relu_l16",
    template: "dense",
    workload: denseBiasRelu(8, 64, 64),
    lanes: 16,
    set: { vectorize: 1 },
  },
  {
    name: "conv2d_l16",
    template: "conv2d",
    workload: conv2d(1, 16, 14, 14, 32, 3, 3, 1, 1),
    lanes: 16,
  },
  {
    name: "conv2d_rich_l16",
    template: "conv2d-rich",
    workload: conv2d(1, 16, 14, 14, 32, 3, 3, 1, 1),
    lanes: 16,
    set: { cache_write: 1 },
  },
  {
    name: "conv2d_packed_l16",
    template: "conv2d-packed",
    workload: conv2d(1, 16, 14, 14, 32, 3, 3, 1, 1),
    lanes: 16,
  },
  {
    name: "conv2d_nchwc_l16",
    template: "conv2d-nchwc",
    workload: conv2d(1, 16, 14, 14, 32, 3, 3, 1, 1),
    lanes: 16,
  },
  {
    name: "conv2d_nchwxc_l16",
    template: "conv2d-nchwxc",
    workload: conv2d(1, 16, 14, 14, 32, 3, 3, 1, 1),
    lanes: 16,
  },
  {
    name: "conv2d_blocked_l16",
    template: "conv2d-blocked",
    workload: createWorkload("conv2d_nchwc", [1, 32, 14, 14, 32, 3, 3, 1, 1, 16, 16]),
    lanes: 16,
  },
  {
    name: "depthwise_blocked_l16",
    template: "depthwise-blocked",
    workload: createWorkload("depthwise_conv2d_nchwc", [1, 32, 14, 14, 3, 3, 1, 1, 16]),
    lanes: 16,
  },
];

interface GpuCase {
  name: string;
  trace: () => Trace;
}

const GPU_CASES: GpuCase[] = [
  {
    name: "gemm_fp32_128x128x16_regs",
    trace: () => gemmConfigs(matmul(1024, 1024, 1024), { math: ["fp32"] })[0].candidate.trace!,
  },
  {
    name: "gemm_tf32_first",
    trace: () => gemmConfigs(matmul(1024, 1024, 1024), { math: ["tf32"] })[0].candidate.trace!,
  },
  {
    name: "gemm_gpu_template_dense_point",
    trace: () => fixedPoint(gpuTemplateSpace("gemm-gpu", denseBiasRelu(128, 256, 256))),
  },
  {
    name: "conv2d_gpu_point",
    trace: () => fixedPoint(gpuTemplateSpace("conv2d-gpu", conv2d(1, 16, 14, 14, 32, 3, 3, 1, 1))),
  },
  {
    name: "matmul_gpu_point",
    trace: () => fixedPoint(gpuTemplateSpace("matmul-gpu", matmul(256, 256, 256))),
  },
];

/** Compares `text` with the golden file `name`, or writes it under TUNEBOOK_GOLDEN=update. */
async function golden(name: string, text: string): Promise<void> {
  const path = join(DIR, name);
  if (UPDATE) {
    await Deno.mkdir(DIR, { recursive: true });
    await Deno.writeTextFile(path, text);
    return;
  }
  let want: string;
  try {
    want = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      assert.fail(`tests/golden/${name} is missing; write it with \`deno task golden\``);
    }
    throw e;
  }
  if (text === want) return;
  const got = text.split("\n"), exp = want.split("\n");
  const line = got.findIndex((l, i) => l !== exp[i]);
  assert.fail(
    `tests/golden/${name} differs at line ${line + 1}:\n  want ${JSON.stringify(exp[line])}\n` +
      `  got  ${JSON.stringify(got[line])}\n(if the change is meant: deno task golden)`,
  );
}

const traceText = (t: Trace) => canonicalJSON(t) + "\n";

for (const c of CPU_CASES) {
  Deno.test(`golden C: ${c.name} (${c.template}, ${c.lanes} lanes)`, async () => {
    const trace = fixedPoint(templateSpace(c.template, c.workload, REGS[c.lanes]), c.set);
    await golden(`${c.name}.trace.json`, traceText(trace));
    const kernel = lower(replayTrace(trace, { prng: createPrng(0) }));
    await golden(`${c.name}.c`, generateC(kernel, { lanes: c.lanes }));
  });
}

for (const c of GPU_CASES) {
  Deno.test(`golden CUDA and OpenCL: ${c.name}`, async () => {
    const trace = c.trace();
    await golden(`${c.name}.trace.json`, traceText(trace));
    const { kernel } = verifyGpu(replayTrace(trace, { prng: createPrng(0) }));
    await golden(`${c.name}.cu`, generateCuda(kernel));
    await golden(`${c.name}.cl`, openclProgram(kernel).source);
  });
}

Deno.test("golden files: every file in tests/golden/ belongs to a case", async () => {
  const names = new Set<string>();
  for (const c of CPU_CASES) names.add(`${c.name}.trace.json`).add(`${c.name}.c`);
  for (const c of GPU_CASES) {
    for (const ext of ["trace.json", "cu", "cl"]) names.add(`${c.name}.${ext}`);
  }
  const stale = [];
  for await (const e of Deno.readDir(DIR)) if (!names.has(e.name)) stale.push(e.name);
  assert.deepEqual(stale, [], "golden files of no case (delete them)");
});
