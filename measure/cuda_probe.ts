/**
 * Is there a CUDA device here? Builds a tiny program with nvcc (cached)
 * that counts devices, and asks the CUDA runner's probe, which runs it in a
 * subprocess (`cuda_worker.ts probe`): the same answer `tune --target cuda`
 * would get, without building a candidate.
 *
 * As a command it prints one line of JSON (`{"ok":false,"count":0,
 * "message":"no CUDA driver (...)"}`) and exits 0 with a device, 3 without
 * one (tune's status), 1 when nvcc could not build the probe.
 *
 * ```sh
 * deno run -A measure/cuda_probe.ts [--cache DIR]
 * ```
 *
 * @example
 * ```ts
 * import { PROBE_SOURCE } from "./cuda_probe.ts";
 * if (!PROBE_SOURCE.includes('extern "C" int tb_cuda_device_count')) throw new Error();
 * ```
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createCudaRunner, type CudaDeviceStatus } from "./cuda_runner.ts";
import { createNvccBuilder } from "./nvcc_builder.ts";

/** The probe program: the two entry points `cuda_worker.ts probe` calls. */
export const PROBE_SOURCE = `#include <cuda_runtime.h>
extern "C" int tb_cuda_device_count(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  return e == cudaSuccess ? n : -(int)e;
}
extern "C" const char *tb_cuda_error_string(int code) {
  return cudaGetErrorString((cudaError_t)code);
}
`;

/**
 * The device status (as {@link createCudaRunner}'s `device()` reports it),
 * or a status with `ok: false` and the build error when nvcc failed.
 */
export async function probeCudaDevice(
  cacheDir = join(Deno.cwd(), ".cache", "cuda"),
): Promise<CudaDeviceStatus & { built: boolean }> {
  const [b] = await createNvccBuilder({ cacheDir }).build([{ source: PROBE_SOURCE }]);
  if (b.errorKind !== "none" || !b.artifact) {
    const why = (b.error ?? b.errorKind).split("\n")[0];
    return { ok: false, count: 0, built: false, message: `nvcc could not build the probe: ${why}` };
  }
  const status = await createCudaRunner().device(b.artifact);
  return {
    ...(status ?? { ok: false, count: 0, message: "no answer from the probe" }),
    built: true,
  };
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Deno.args, options: { cache: { type: "string" } } });
  const s = await probeCudaDevice(values.cache);
  console.log(JSON.stringify(s));
  Deno.exit(s.ok ? 0 : s.built ? 3 : 1);
}
