/**
 * Hand-written configurations of the GEMM template (`ir/gemm_gpu.ts`) that a
 * GPU run measures first, as Triton's autotuner measures a kernel's list of
 * `triton.Config`s and AutoTVM falls back to a known configuration: a few
 * hundred trials of a space of millions of points may not reach the tiles
 * every fast SGEMM uses, so they are tried before the search starts.
 *
 * The list follows the kernels measured on an H100 in
 * `shared/guide/gpu-codegen-lessons.md` (hand-written CUDA, not this
 * generator's): FP32 128x128x16 with 8x8 outputs per thread, warps of 64x32
 * in 8x4 lanes, the next tile prefetched through registers, padded rows and
 * two blocks per SM (0.84 of cuBLAS at 4096³); the same with a `cp.async`
 * double buffer (0.82); 128x64 with 128 threads for small grids (0.78 at
 * 1024³), its transpose 64x128 and a 64x64 tile for outputs of 64 rows (a
 * convolution's 64 filters); and TF32 `mma.sync` tiles of 128x128x32,
 * 128x256x32 and 64x64x32 with `cp.async` rings (0.37-0.83 of cuBLAS TF32).
 * Where a configuration's blocks leave SMs idle, a split-K variant that
 * fills them follows it. FP16 and BF16 inputs get the 128x128x32 tile. A
 * block tile at least twice the output's rows or columns is left out (half
 * of it would be empty). Only the kinds of arithmetic a run allows
 * (`ir/gemm_math.ts`) and configurations the template accepts on the
 * workload ({@link gemmPlan}) are returned.
 *
 * Each candidate's trace is a sample of the GEMM sketch whose decisions are
 * the configuration's values ({@link gemmSketch} with `fixed`), so a search
 * of the sketches can learn from it and mutate it like its own samples.
 *
 * @example
 * ```ts
 * import { gemmConfigs } from "./gemm_configs.ts";
 * import { matmul } from "../ir/workloads.ts";
 * const fp32 = gemmConfigs(matmul(4096, 4096, 4096), { math: ["fp32"] });
 * if (fp32[0].name !== "fp32-128x128x16-regs") throw new Error();
 * const ops = new Set(fp32[0].candidate.trace!.insts.map((i) => i.op));
 * if (ops.size !== 2 || !ops.has("sample_categorical")) throw new Error();
 * ```
 * @module
 */
import { ScheduleError } from "../ir/errors.ts";
import { GEMM_DEFAULTS, gemmPlan, gemmProblemOf } from "../ir/gemm_gpu.ts";
import { ALL_MATH, type MathKind, mmaValues } from "../ir/gemm_math.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { type GpuTarget, H100 } from "../ir/target_gpu.ts";
import { type Trace, traceOf } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";
import { gemmSketch } from "./sketch_gpu.ts";
import type { Candidate } from "./strategy.ts";

/** A named configuration: `gemm.*` pragma values, those left out as {@link GEMM_DEFAULTS}. */
export interface GemmConfig {
  name: string;
  values: Readonly<Record<string, number>>;
}

/** The configurations, in the order they are tried (before split-K variants). */
export const GEMM_CONFIGS: readonly GemmConfig[] = Object.freeze([
  { name: "fp32-128x128x16-regs", values: {} },
  { name: "fp32-128x128x16-cp.async", values: { "gemm.load": 2, "gemm.stages": 2 } },
  { name: "fp32-128x64x16-regs", values: { "gemm.block_n": 64, "gemm.min_blocks": 1 } },
  {
    name: "fp32-64x128x16-regs",
    values: { "gemm.block_m": 64, "gemm.warp_m": 32, "gemm.warp_n": 64, "gemm.lanes_n": 8 },
  },
  {
    name: "fp32-64x64x16-regs",
    values: { "gemm.block_m": 64, "gemm.block_n": 64, "gemm.warp_m": 32, "gemm.warp_n": 32 },
  },
  ...tensorCore("tf32", 1),
  {
    name: "tf32-128x256x32-cp.async3",
    values: {
      "gemm.mma": 1,
      "gemm.block_n": 256,
      "gemm.block_k": 32,
      "gemm.warp_n": 64,
      "gemm.load": 2,
      "gemm.stages": 3,
      "gemm.min_blocks": 1,
    },
  },
  {
    name: "tf32-64x64x32-cp.async3",
    values: {
      "gemm.mma": 1,
      "gemm.block_m": 64,
      "gemm.block_n": 64,
      "gemm.block_k": 32,
      "gemm.warp_m": 32,
      "gemm.warp_n": 32,
      "gemm.load": 2,
      "gemm.stages": 3,
      "gemm.min_blocks": 1,
    },
  },
  ...tensorCore("fp16", 2),
  ...tensorCore("bf16", 3),
]);

/** The 128x128x32 tensor-core tile with a 2-stage `cp.async` ring, for one kind. */
function tensorCore(kind: string, mma: number): GemmConfig[] {
  return [{
    name: `${kind}-128x128x32-cp.async2`,
    values: {
      "gemm.mma": mma,
      "gemm.block_k": 32,
      "gemm.load": 2,
      "gemm.stages": 2,
      "gemm.min_blocks": 1,
    },
  }];
}

/** Options of {@link gemmConfigs}. */
export interface GemmConfigOptions {
  /** Arithmetic allowed (default every kind). */
  math?: readonly MathKind[];
  /** The device (default the H100): its SM count and limits. */
  target?: Readonly<GpuTarget>;
}

/** A configuration with its candidate (a GEMM sketch sample with the configuration's decisions). */
export interface GemmConfigCandidate {
  name: string;
  values: Record<string, number>;
  candidate: Candidate;
}

/**
 * The configurations a run on `w` measures first: those of the allowed
 * arithmetic the template accepts on the workload, each followed by its
 * split-K variant where its blocks number fewer than the SMs. Empty for a
 * workload the GEMM template does not cover.
 */
export function gemmConfigs(w: Workload, options: GemmConfigOptions = {}): GemmConfigCandidate[] {
  const p = gemmProblemOf(w);
  if (!p) return [];
  const target = options.target ?? H100;
  const math = options.math ?? ALL_MATH;
  const mma = mmaValues(math);
  const sms = target.smCount ?? 132;
  const out: GemmConfigCandidate[] = [];
  const add = (name: string, values: Record<string, number>) => {
    let trace: Trace;
    try {
      gemmPlan(p, values, target);
      const sch = new Schedule(w, { prng: createPrng(0) });
      gemmSketch(sch, target, math, values);
      trace = traceOf(sch);
    } catch (e) {
      if (e instanceof ScheduleError) return;
      throw e;
    }
    out.push({ name, values, candidate: { trace } });
  };
  for (const c of GEMM_CONFIGS) {
    const values = { ...GEMM_DEFAULTS, ...c.values };
    if (!mma.includes(values["gemm.mma"])) continue;
    // A block tile twice the output's extent or more is half empty: the smaller ones serve it.
    if (values["gemm.block_m"] >= 2 * p.M || values["gemm.block_n"] >= 2 * p.N) continue;
    add(c.name, values);
    const blocks = Math.ceil(p.M / values["gemm.block_m"]) *
      Math.ceil(p.N / values["gemm.block_n"]);
    if (blocks >= sms) continue;
    // The smallest split that gives every SM a block (at most 8).
    const split = [2, 4, 8].find((s) => blocks * s >= sms) ?? 8;
    add(`${c.name}-splitk${split}`, { ...values, "gemm.split_k": split });
  }
  return out;
}
