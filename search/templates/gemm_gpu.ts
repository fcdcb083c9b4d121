/**
 * The `gemm-gpu` template: the knobs of the GEMM-class template of
 * `ir/gemm_gpu.ts` (block and warp tiles, float4 or `cp.async` pipelines,
 * tensor cores, split-K), valid where `gemmPlan` accepts them; the default
 * GPU template of matmul, dense and conv2d.
 * @module
 */
import { GEMM_KNOBS, gemmPlan, gemmProblemOf } from "../../ir/gemm_gpu.ts";
import { mmaValues } from "../../ir/gemm_math.ts";
import { H100 } from "../../ir/target_gpu.ts";
import { type GpuTemplate, reductionStage } from "./gpu_template.ts";

/**
 * `gemm-gpu`.
 *
 * @example
 * ```ts
 * import { GEMM_GPU } from "./gemm_gpu.ts";
 * if (!GEMM_GPU.workloads.includes("dense")) throw new Error();
 * ```
 */
export const GEMM_GPU: GpuTemplate = {
  workloads: ["matmul", "dense", "conv2d"],
  knobs: (_, math) =>
    Object.entries(GEMM_KNOBS).map(([key, options]) => ({
      name: key.slice("gemm.".length),
      kind: "other" as const,
      options: key === "gemm.mma" ? mmaValues(math) : [...options],
    })),
  shape: (v) => {
    const n = (k: string) => v[k] as number;
    const warps = (n("block_m") / n("warp_m")) * (n("block_n") / n("warp_n"));
    return { threads: 32 * warps, tile: n("warp_m") * n("warp_n") / 32 };
  },
  check: (w, v, maxThreads, maxShared) => {
    const values = Object.fromEntries(
      Object.entries(v).map(([k, x]) => [`gemm.${k}`, x as number]),
    );
    gemmPlan(gemmProblemOf(w)!, values, {
      ...H100,
      maxThreadsPerBlock: maxThreads,
      maxSharedBytesPerBlockOptin: maxShared,
    });
  },
  apply: (sch, v) => {
    const stage = reductionStage(sch.workload);
    for (const [k, x] of Object.entries(v)) sch.annotate(stage, `gemm.${k}`, x as number);
  },
};
