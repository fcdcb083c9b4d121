/**
 * CUDA C generation from the loop AST of a GPU schedule: one
 * `extern "C" __global__` kernel per root stage (grid and block from the
 * bound loops, see {@link gpuLaunches}) and a host side with C entry points:
 *
 * - `int <prefix>_cuda_device_count(void)`: the number of devices, or minus
 *   the `cudaError_t` when the runtime cannot count them (-35,
 *   cudaErrorInsufficientDriver, on a machine without a driver);
 * - `const char *<prefix>_cuda_error_string(int code)`: `cudaGetErrorString`;
 * - `int <prefix>_cuda_run(float **host_bufs, const long *sizes, int nbufs,
 *   int repeat, double *times_ms)`: allocates device buffers (parameters and
 *   temporaries), copies the inputs, opts kernels with more than 48 KiB of
 *   dynamic shared memory in (`cudaFuncSetAttribute`), launches once (warm-up, and the output
 *   that is checked), then `repeat` times between CUDA events
 *   (`times_ms[r]` = milliseconds of repeat `r`), copies the outputs back,
 *   frees everything and returns the `cudaError_t` (0 on success). Without a
 *   driver it returns 35 and touches nothing.
 *
 * `host_bufs` holds the kernel's parameters in `Kernel.params` order (inputs
 * then outputs) and `sizes` their element counts, which are checked.
 *
 * @example
 * ```ts
 * import { generateCuda } from "./codegen_cuda.ts";
 * import { lower } from "./lower.ts";
 * import { Schedule } from "./schedule.ts";
 * import { matmul } from "./workloads.ts";
 * import { createPrng } from "./prng.ts";
 * const sch = new Schedule(matmul(64, 64, 64), { prng: createPrng(0) });
 * sch.bind("C", "i", "blockIdx.x");
 * sch.bind("C", "j", "threadIdx.x");
 * const cu = generateCuda(lower(sch));
 * if (!cu.includes("tb_k0<<<dim3(64, 1, 1), dim3(64, 1, 1)>>>")) throw new Error();
 * ```
 * @module
 */
import { checkObject, described } from "./check.ts";
import type { Kernel, ThreadAxis } from "./ast.ts";
import { deviceBody, type Dialect, globalBuffers } from "./_gpu_emit.ts";
import { emitGemm } from "./_gemm_emit.ts";
import { isGemmKernel } from "./gemm_gpu.ts";
import { type GpuLaunch, gpuLaunches } from "./target_gpu.ts";

/** Options of {@link generateCuda}. */
export interface CudaOptions {
  /**
   * Prefix of every global symbol (kernels `<prefix>_k<i>`, host entries
   * `<prefix>_cuda_run` …), so several programs fit in one .cu file. Default `"tb"`.
   */
  prefix?: string;
}

const CUDA: Dialect = {
  index: (axis: ThreadAxis) => axis,
  shared: "__shared__",
  barrier: "__syncthreads();",
};

/** CUDA source of a lowered GPU kernel; see the module documentation. */
export function generateCuda(kernel: Kernel, options: CudaOptions = {}): string {
  const k = kernel as Partial<Kernel> | undefined;
  if (typeof k !== "object" || k === null || !Array.isArray(k.body) || !Array.isArray(k.params)) {
    throw new TypeError(`kernel must be a kernel (lower(schedule)), got ${described(kernel)}`);
  }
  checkObject(options, "generateCuda options");
  const prefix = options.prefix ?? "tb";
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,31}$/.test(prefix)) {
    throw new TypeError(`Invalid symbol prefix ${JSON.stringify(prefix)}`);
  }
  const launches = gpuLaunches(kernel, prefix);
  const bufs = globalBuffers(kernel);
  const gemm = isGemmKernel(kernel);
  const out: string[] = [
    "#include <cuda_runtime.h>",
    ...(gemm ? ["#include <cuda_fp16.h>", "#include <cuda_bf16.h>"] : []),
    "",
    ...launches.map((l) =>
      `// launch ${l.name} stage ${l.stage} grid ${dims(l.grid)} block ${dims(l.block)}`
    ),
    "",
  ];
  // Before the kernels: ptxas reports its kernels in reverse order, the launches' first.
  out.push(...halfKernels(kernel, prefix));
  if (gemm) out.push(...emitGemm(kernel, launches, true));
  for (const l of gemm ? [] : launches) {
    const threads = l.block[0] * l.block[1] * l.block[2];
    const params = bufs.map((b) => `float *__restrict__ ${b.buf}`).join(", ");
    out.push(`extern "C" __global__ void __launch_bounds__(${threads}) ${l.name}(${params}) {`);
    out.push(...deviceBody(l, CUDA), "}", "");
  }
  out.push(...hostCode(kernel, launches, prefix));
  return out.join("\n");
}

function dims(d: number[]): string {
  return d.join("x");
}

/** The conversion kernels `<p>_to_f16` / `<p>_to_bf16` of the 16-bit inputs' formats. */
function halfKernels(kernel: Kernel, p: string): string[] {
  const formats = new Set(kernel.params.flatMap((b) => b.storage ? [b.storage] : []));
  const convert = {
    f16: "__half_as_ushort(__float2half_rn",
    bf16: "__bfloat16_as_ushort(__float2bfloat16_rn",
  };
  return [...formats].flatMap((f) => [
    `extern "C" __global__ void ${p}_to_${f}(const float *x, unsigned short *y, long n) {`,
    "  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;",
    `  if (i < n) y[i] = ${convert[f]}(x[i]));`,
    "}",
    "",
  ]);
}

/**
 * `<p>_pack_inputs(float **d)`, for a kernel with 16-bit inputs
 * (`Kernel.params[i].storage`): each such input, uploaded as floats, is
 * rounded to FP16 or BF16 (nearest even) into a scratch buffer whose bytes
 * then replace the first half of the input's buffer. Nothing otherwise.
 */
function packInputs(kernel: Kernel, p: string): string[] {
  const packed = kernel.params.flatMap((b, i) => b.storage ? [{ ...b, i }] : []);
  if (packed.length === 0) return [];
  const out = [
    `static cudaError_t ${p}_pack_inputs(float **d) {`,
    "  cudaError_t e;",
    "  unsigned short *s = 0;",
  ];
  for (const b of packed) {
    out.push(
      `  if ((e = cudaMalloc((void **)&s, ${b.size}UL * 2)) != cudaSuccess) return e;`,
      `  ${p}_to_${b.storage}<<<${Math.ceil(b.size / 256)}, 256>>>(d[${b.i}], s, ${b.size}L);`,
      `  e = cudaMemcpy(d[${b.i}], s, ${b.size}UL * 2, cudaMemcpyDeviceToDevice);`,
      "  cudaFree(s);",
      "  if (e != cudaSuccess) return e;",
    );
  }
  out.push("  return cudaGetLastError();", "}", "");
  return out;
}

function hostCode(kernel: Kernel, launches: GpuLaunch[], p: string): string[] {
  const bufs = globalBuffers(kernel);
  const n = kernel.params.length;
  const nb = bufs.length;
  const out: string[] = [
    `extern "C" int ${p}_cuda_device_count(void) {`,
    "  int n = 0;",
    "  cudaError_t e = cudaGetDeviceCount(&n);",
    "  return e == cudaSuccess ? n : -(int)e;",
    "}",
    "",
    `extern "C" const char *${p}_cuda_error_string(int code) {`,
    "  return cudaGetErrorString((cudaError_t)code);",
    "}",
    "",
    `static cudaError_t ${p}_launch(float **d) {`,
    "  cudaError_t e;",
  ];
  for (const l of launches) {
    const args = bufs.map((_, i) => `d[${i}]`).join(", ");
    const smem = l.dynamicSharedBytes ? `, ${l.dynamicSharedBytes}` : "";
    out.push(
      `  ${l.name}<<<dim3(${l.grid.join(", ")}), dim3(${l.block.join(", ")})${smem}>>>(${args});`,
      "  e = cudaGetLastError();",
      "  if (e != cudaSuccess) return e;",
    );
  }
  out.push("  return cudaSuccess;", "}", "");
  out.push(...packInputs(kernel, p));
  // Dynamic shared memory above the 48 KiB default needs the kernel's opt-in, once.
  out.push(`static cudaError_t ${p}_setup(void) {`);
  for (const l of launches) {
    if ((l.dynamicSharedBytes ?? 0) <= 48 * 1024) continue;
    out.push(
      `  cudaError_t e${l.name} = cudaFuncSetAttribute(${l.name}, cudaFuncAttributeMaxDynamicSharedMemorySize, ${l.dynamicSharedBytes});`,
      `  if (e${l.name} != cudaSuccess) return e${l.name};`,
    );
  }
  out.push("  return cudaSuccess;", "}", "");
  out.push(
    `static cudaError_t ${p}_run_impl(float **host, const long *sizes, int nbufs, int repeat,`,
    "                               double *times_ms, float **d, cudaEvent_t *ev) {",
    "  cudaError_t e;",
    `  if (nbufs != ${n} || repeat < 0) return cudaErrorInvalidValue;`,
  );
  kernel.params.forEach((b, i) => {
    out.push(`  if (sizes[${i}] != ${b.size}L) return cudaErrorInvalidValue;`);
  });
  bufs.forEach((b, i) => {
    out.push(
      `  e = cudaMalloc((void **)&d[${i}], ${b.size}UL * sizeof(float));`,
      "  if (e != cudaSuccess) return e;",
    );
  });
  kernel.params.forEach((b, i) => {
    if (b.role !== "input") return;
    out.push(
      `  e = cudaMemcpy(d[${i}], host[${i}], ${b.size}UL * sizeof(float), cudaMemcpyHostToDevice);`,
      "  if (e != cudaSuccess) return e;",
    );
  });
  if (kernel.params.some((b) => b.storage)) {
    out.push(`  if ((e = ${p}_pack_inputs(d)) != cudaSuccess) return e;`);
  }
  out.push(
    "  if ((e = cudaEventCreate(&ev[0])) != cudaSuccess) return e;",
    "  if ((e = cudaEventCreate(&ev[1])) != cudaSuccess) return e;",
    `  if ((e = ${p}_setup()) != cudaSuccess) return e;`,
    `  if ((e = ${p}_launch(d)) != cudaSuccess) return e;`,
    "  if ((e = cudaDeviceSynchronize()) != cudaSuccess) return e;",
    "  for (int r = 0; r < repeat; ++r) {",
    "    float ms = 0.0f;",
    "    if ((e = cudaEventRecord(ev[0], 0)) != cudaSuccess) return e;",
    `    if ((e = ${p}_launch(d)) != cudaSuccess) return e;`,
    "    if ((e = cudaEventRecord(ev[1], 0)) != cudaSuccess) return e;",
    "    if ((e = cudaEventSynchronize(ev[1])) != cudaSuccess) return e;",
    "    if ((e = cudaEventElapsedTime(&ms, ev[0], ev[1])) != cudaSuccess) return e;",
    "    times_ms[r] = (double)ms;",
    "  }",
  );
  kernel.params.forEach((b, i) => {
    if (b.role !== "output") return;
    out.push(
      `  e = cudaMemcpy(host[${i}], d[${i}], ${b.size}UL * sizeof(float), cudaMemcpyDeviceToHost);`,
      "  if (e != cudaSuccess) return e;",
    );
  });
  out.push("  return cudaSuccess;", "}", "");
  out.push(
    `extern "C" int ${p}_cuda_run(float **host_bufs, const long *sizes, int nbufs, int repeat,`,
    "                          double *times_ms) {",
    `  float *d[${nb}] = {0};`,
    "  cudaEvent_t ev[2] = {0, 0};",
    `  cudaError_t e = ${p}_run_impl(host_bufs, sizes, nbufs, repeat, times_ms, d, ev);`,
    `  for (int i = 0; i < ${nb}; ++i) {`,
    "    if (d[i]) cudaFree(d[i]);",
    "  }",
    "  if (ev[0]) cudaEventDestroy(ev[0]);",
    "  if (ev[1]) cudaEventDestroy(ev[1]);",
    "  return (int)e;",
    "}",
    "",
  );
  return out;
}
