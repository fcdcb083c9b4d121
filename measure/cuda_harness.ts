/**
 * The timing harness of a CUDA program: host code appended to the output of
 * `generateCuda` (same translation unit) that defines
 *
 * ```c
 * extern "C" int <prefix>_cuda_measure(float **host, const long *sizes, int nbufs,
 *     int number, int repeat, double min_repeat_ms, int flush_l2,
 *     double *times_ms, int *number_used);
 * ```
 *
 * It allocates the device buffers (parameters, then temporaries), copies the
 * inputs, fills every output with NaN (bytes `0xff`), opts kernels with
 * more than 48 KiB of dynamic shared memory in, launches once and copies
 * the outputs back: that launch is the one checked, and the warm-up. Then it
 * times `repeat` repeats of `number` launches each between two CUDA events,
 * as TVM's time evaluator does: while a repeat lasts less than
 * `min_repeat_ms`, `number` grows (to `min_repeat_ms / per-launch + 1`, at
 * least ×1.618) and the repeat is timed again; `times_ms[r]` is milliseconds
 * per launch of repeat `r` and `*number_used` the final `number`. With
 * `flush_l2`, a buffer twice the device's L2 size is overwritten (untimed)
 * before each repeat so no repeat starts with warm L2. It returns the
 * `cudaError_t` (0 on success); without a driver, 35 and nothing run.
 *
 * The interface it relies on in the generated program: `static cudaError_t
 * <prefix>_launch(float **d)`, which launches every kernel of the program on
 * the default stream with `d` holding the device buffers in
 * `[...kernel.params, ...kernel.temps]` order.
 *
 * @example
 * ```ts
 * import { cudaHarness } from "./cuda_harness.ts";
 * const text = cudaHarness({
 *   params: [{ size: 64, role: "input" }, { size: 16, role: "output" }],
 *   temps: [],
 * });
 * if (!text.includes('extern "C" int tb_cuda_measure(')) throw new Error();
 * ```
 * @module
 */

/** The buffers of a lowered GPU kernel the harness needs (a subset of `Kernel`). */
export interface HarnessBuffers {
  /**
   * Parameters in `bufs[]` order: inputs then outputs. With any `storage`
   * (16-bit inputs), the program's `<prefix>_pack_inputs(d)` (generateCuda)
   * converts the uploaded floats before the checked launch.
   */
  params: { size: number; role: "input" | "output"; storage?: "f16" | "bf16" }[];
  /** Device temporaries, after the parameters. */
  temps: { size: number }[];
  /**
   * The program's kernel launches (`gpuLaunches`): a kernel with more than
   * 48 KiB of dynamic shared memory is opted in (`cudaFuncSetAttribute`)
   * before the first launch. Default: none needs it.
   */
  launches?: { name: string; dynamicSharedBytes?: number }[];
}

/** The FFI symbols of a program with the harness (and `generateCuda`'s entry points). */
export const CUDA_MEASURE_SYMBOLS = {
  tb_cuda_device_count: { parameters: [], result: "i32" },
  tb_cuda_error_string: { parameters: ["i32"], result: "pointer" },
  tb_cuda_measure: {
    parameters: ["buffer", "buffer", "i32", "i32", "i32", "f64", "i32", "buffer", "buffer"],
    result: "i32",
  },
} as const;

/** Host C++ of the timing harness for `kernel`; see the module documentation. */
export function cudaHarness(kernel: HarnessBuffers, prefix = "tb"): string {
  const p = prefix;
  const sizes = [...kernel.params, ...kernel.temps].map((b) => `${b.size}L`);
  const np = kernel.params.length;
  const outputs = kernel.params.flatMap((b, i) => b.role === "output" ? [i] : []);
  const inputs = kernel.params.flatMap((b, i) => b.role === "input" ? [i] : []);
  const list = (xs: number[]) => xs.length ? xs.join(", ") : "-1";
  const optIn = (kernel.launches ?? []).filter((l) => (l.dynamicSharedBytes ?? 0) > 48 * 1024)
    .map((l) =>
      `  e = cudaFuncSetAttribute(${l.name}, cudaFuncAttributeMaxDynamicSharedMemorySize, ${l.dynamicSharedBytes});\n` +
      "  if (e != cudaSuccess) return e;\n"
    ).join("");
  return `
// Timing harness (measure/cuda_harness.ts): checked launch on NaN-filled outputs,
// then number x repeat launches between CUDA events, optional L2 flush per repeat.
static const long ${p}_h_sizes[${sizes.length}] = {${sizes.join(", ")}};
static const int ${p}_h_inputs[] = {${list(inputs)}};
static const int ${p}_h_outputs[] = {${list(outputs)}};

static cudaError_t ${p}_h_impl(float **host, const long *sizes, int nbufs, int number, int repeat,
                              double min_ms, int flush, double *times_ms, int *number_used,
                              float **d, cudaEvent_t *ev, void **fbuf) {
  cudaError_t e;
  if (nbufs != ${np} || repeat < 0 || number < 1) return cudaErrorInvalidValue;
  for (int i = 0; i < ${np}; ++i) {
    if (sizes[i] != ${p}_h_sizes[i]) return cudaErrorInvalidValue;
  }
  for (int i = 0; i < ${sizes.length}; ++i) {
    if ((e = cudaMalloc((void **)&d[i], ${p}_h_sizes[i] * sizeof(float))) != cudaSuccess) return e;
  }
  for (int k = 0; k < ${inputs.length}; ++k) {
    int i = ${p}_h_inputs[k];
    e = cudaMemcpy(d[i], host[i], ${p}_h_sizes[i] * sizeof(float), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) return e;
  }
${
    kernel.params.some((b) => b.storage)
      ? `  if ((e = ${p}_pack_inputs(d)) != cudaSuccess) return e;\n`
      : ""
  }  for (int k = 0; k < ${outputs.length}; ++k) {
    int i = ${p}_h_outputs[k];
    if ((e = cudaMemset(d[i], 0xff, ${p}_h_sizes[i] * sizeof(float))) != cudaSuccess) return e;
  }
${optIn}  if ((e = ${p}_launch(d)) != cudaSuccess) return e;
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) return e;
  for (int k = 0; k < ${outputs.length}; ++k) {
    int i = ${p}_h_outputs[k];
    e = cudaMemcpy(host[i], d[i], ${p}_h_sizes[i] * sizeof(float), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return e;
  }
  size_t fbytes = 0;
  if (flush && repeat > 0) {
    int dev = 0, l2 = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess) return e;
    if ((e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev)) != cudaSuccess) return e;
    fbytes = 2 * (size_t)(l2 > (1 << 20) ? l2 : (1 << 20));
    if ((e = cudaMalloc(fbuf, fbytes)) != cudaSuccess) return e;
  }
  if ((e = cudaEventCreate(&ev[0])) != cudaSuccess) return e;
  if ((e = cudaEventCreate(&ev[1])) != cudaSuccess) return e;
  for (int r = 0; r < repeat; ++r) {
    float ms = 0.0f;
    for (;;) {
      if (fbytes && (e = cudaMemsetAsync(*fbuf, r & 0xff, fbytes, 0)) != cudaSuccess) return e;
      if ((e = cudaEventRecord(ev[0], 0)) != cudaSuccess) return e;
      for (int n = 0; n < number; ++n) {
        if ((e = ${p}_launch(d)) != cudaSuccess) return e;
      }
      if ((e = cudaEventRecord(ev[1], 0)) != cudaSuccess) return e;
      if ((e = cudaEventSynchronize(ev[1])) != cudaSuccess) return e;
      if ((e = cudaEventElapsedTime(&ms, ev[0], ev[1])) != cudaSuccess) return e;
      if ((double)ms >= min_ms || number >= (1 << 24)) break;
      // Below the events' resolution (0 ms): ten times more launches, not min_ms / 0.
      double golden = number * 1.618, next = number * 10.0;
      if (ms > 0.0f) {
        double grown = min_ms / ((double)ms / number) + 1.0;
        next = grown > golden ? grown : golden;
      }
      number = next > (double)(1 << 24) ? (1 << 24) : (int)next;
    }
    times_ms[r] = (double)ms / number;
  }
  *number_used = number;
  return cudaSuccess;
}

extern "C" int ${p}_cuda_measure(float **host, const long *sizes, int nbufs, int number,
                                int repeat, double min_repeat_ms, int flush_l2,
                                double *times_ms, int *number_used) {
  float *d[${sizes.length}] = {0};
  cudaEvent_t ev[2] = {0, 0};
  void *fbuf = 0;
  cudaError_t e = ${p}_h_impl(host, sizes, nbufs, number, repeat, min_repeat_ms, flush_l2,
                             times_ms, number_used, d, ev, &fbuf);
  for (int i = 0; i < ${sizes.length}; ++i) {
    if (d[i]) cudaFree(d[i]);
  }
  if (fbuf) cudaFree(fbuf);
  if (ev[0]) cudaEventDestroy(ev[0]);
  if (ev[1]) cudaEventDestroy(ev[1]);
  return (int)e;
}
`;
}
