/**
 * What `tune --target cuda` plugs into the tuning loop besides the CUDA
 * measurer (`measure/cuda.ts`, re-exported here): the GPU design spaces.
 * @module
 */
import type { Workload } from "../ir/workloads.ts";
import { randomSearch } from "../search/random.ts";
import { createStrategy } from "../search/registry.ts";
import { gpuSpace } from "../search/sketch_gpu.ts";
import type { Strategy } from "../search/strategy.ts";
import { evolutionaryTraceSearch } from "../search/evolutionary_traces.ts";
import { defaultGpuTemplate, gpuTemplateSpace } from "../search/templates_gpu.ts";

export {
  createCudaMeasurer,
  cudaKernelSource,
  cudaMeasurement,
  type CudaMeasurementOptions,
  type CudaMeasurer,
  type CudaMeasurerOptions,
} from "../measure/cuda.ts";

/**
 * The strategy of a CUDA run: `random` and `evolutionary` search the GPU
 * sketch space; knob strategies search the GPU template (`matmul-gpu`, …).
 */
export function cudaStrategy(
  strategy: string,
  w: Workload,
  seed: number,
  template?: string,
): Strategy {
  if (strategy === "random") return randomSearch(gpuSpace(w), { seed });
  if (strategy === "evolutionary") return evolutionaryTraceSearch(gpuSpace(w), { seed });
  const name = template ?? defaultGpuTemplate(w);
  if (!name) throw new RangeError(`No GPU knob template for ${w.name}; use --strategy random`);
  const t = gpuTemplateSpace(name, w);
  return createStrategy(strategy, t.space, { seed, candidateOf: t.candidateOf });
}
