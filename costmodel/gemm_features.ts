/**
 * Features of a GEMM-template candidate (`ir/gemm_gpu.ts`): what its
 * `gemm.*` pragmas configure, read from the checked plan. The loop nest a
 * GEMM-template schedule lowers to is the workload's naive nest whatever the
 * pragmas, so without these columns every candidate of the template looks
 * the same to a trace-feature cost model. They are appended to both trace
 * feature sets (`features.ts`); all zero for a schedule without `gemm.*`
 * pragmas or whose plan the target refuses (`gemm.present` says which).
 *
 * @example
 * ```ts
 * import { GEMM_FEATURE_NAMES, gemmFeatures } from "./gemm_features.ts";
 * import { GEMM_DEFAULTS } from "../ir/gemm_gpu.ts";
 * import { createPrng } from "../ir/prng.ts";
 * import { Schedule } from "../ir/schedule.ts";
 * import { matmul } from "../ir/workloads.ts";
 * const sch = new Schedule(matmul(1024, 1024, 1024), { prng: createPrng(0) });
 * for (const [k, v] of Object.entries(GEMM_DEFAULTS)) sch.annotate("C", k, v);
 * const f = gemmFeatures(sch);
 * if (f[GEMM_FEATURE_NAMES.indexOf("gemm.threads.log2")] !== 8) throw new Error();
 * ```
 * @module
 */
import { ScheduleError } from "../ir/errors.ts";
import { type GemmPlan, gemmPlan, gemmProblemOf, hasGemmPragmas } from "../ir/gemm_gpu.ts";
import type { Schedule } from "../ir/schedule.ts";
import { type GpuTarget, H100 } from "../ir/target_gpu.ts";

/** Threads one SM runs at most (H100, as every GPU since Volta but Turing). */
const THREADS_PER_SM = 2048;

/** The GEMM features, in order, each with its definition. */
const GEMM_COLUMNS: readonly [string, string, (g: GemmPlan, t: Readonly<GpuTarget>) => number][] = [
  [
    "gemm.present",
    "1 for a GEMM-template candidate whose plan the target accepts, else 0",
    () => 1,
  ],
  ["gemm.block_m.log2", "log2 of the block tile along M", (g) => Math.log2(g.blockM)],
  ["gemm.block_n.log2", "log2 of the block tile along N", (g) => Math.log2(g.blockN)],
  ["gemm.block_k.log2", "log2 of the k-step of a block", (g) => Math.log2(g.blockK)],
  ["gemm.warp_m.log2", "log2 of a warp's tile along M", (g) => Math.log2(g.warpM)],
  ["gemm.warp_n.log2", "log2 of a warp's tile along N", (g) => Math.log2(g.warpN)],
  ["gemm.lanes_n", "lanes of a warp along N (FP32 path)", (g) => g.lanesN],
  [
    "gemm.thread_outputs.log2",
    "log2 of the outputs (accumulators) each thread keeps",
    (g) => Math.log2(g.warpM * g.warpN / 32),
  ],
  ["gemm.mma.fp32", "1 for FP32 FMA math", (g) => Number(g.mma === 0)],
  ["gemm.mma.tf32", "1 for TF32 mma.sync (m16n8k8)", (g) => Number(g.mma === 1)],
  ["gemm.mma.fp16", "1 for FP16-input mma.sync (m16n8k16)", (g) => Number(g.mma === 2)],
  ["gemm.mma.bf16", "1 for BF16-input mma.sync (m16n8k16)", (g) => Number(g.mma === 3)],
  [
    "gemm.load.direct",
    "1 when tiles are loaded straight into one buffer",
    (g) => Number(g.load === 0),
  ],
  [
    "gemm.load.regs",
    "1 when the next tile is prefetched via registers",
    (g) => Number(g.load === 1),
  ],
  ["gemm.load.cp_async", "1 for a cp.async ring of buffers", (g) => Number(g.load === 2)],
  ["gemm.stages", "shared-memory buffers (pipeline stages)", (g) => g.stages],
  ["gemm.vec_a", "global vector width of A after the scalar fallback (1 or 4)", (g) => g.vecA],
  ["gemm.vec_b", "global vector width of B after the scalar fallback (1 or 4)", (g) => g.vecB],
  ["gemm.a_transposed", "1 when A is stored transposed in shared memory", (g) => Number(g.aTrans)],
  ["gemm.pad", "floats of padding per shared row", (g) => g.pad],
  ["gemm.split_k.log2", "log2 of the blocks K is split among", (g) => Math.log2(g.splitK)],
  [
    "gemm.min_blocks",
    "__launch_bounds__ minimum blocks per SM (caps registers)",
    (g) => g.minBlocks,
  ],
  [
    "gemm.register_cap",
    "registers per thread the launch bounds allow: min(255, registers per SM / (threads x min_blocks))",
    (g, t) =>
      Math.min(t.maxRegistersPerThread, Math.floor(t.registersPerSM / (g.threads * g.minBlocks))),
  ],
  ["gemm.threads.log2", "log2 of threads per block", (g) => Math.log2(g.threads)],
  [
    "gemm.smem.log2_bytes",
    "log2(1 + shared memory bytes per block)",
    (g) => Math.log2(1 + g.sharedBytes),
  ],
  [
    "gemm.smem.optin",
    "1 when shared memory exceeds the 48 KiB static limit (dynamic opt-in)",
    (g, t) => Number(g.sharedBytes > t.maxSharedBytesPerBlock),
  ],
  [
    "gemm.blocks_per_sm",
    "blocks an SM can hold by threads and shared memory (registers unknown before ptxas)",
    (g, t) => blocksPerSM(g, t),
  ],
  ["gemm.blocks.log2", "log2 of the blocks of the main kernel", (g) => Math.log2(blocks(g))],
  ["gemm.waves", "blocks / (SMs x blocks per SM): waves of the launch", (g, t) => waves(g, t)],
  [
    "gemm.wave_efficiency",
    "waves / ceil(waves): busy fraction of the last wave's SMs",
    (g, t) => waves(g, t) / Math.ceil(waves(g, t)),
  ],
  [
    "gemm.sm_fill",
    "min(1, blocks / SMs): fraction of SMs with a block",
    (g, t) => Math.min(1, blocks(g) / sms(t)),
  ],
  [
    "gemm.edge_waste",
    "fraction of the tiled output outside M x N (imperfect edge tiles)",
    (g) =>
      1 -
      (g.M * g.N) / (Math.ceil(g.M / g.blockM) * g.blockM * Math.ceil(g.N / g.blockN) * g.blockN),
  ],
  [
    "gemm.k_steps.log2",
    "log2 of the k-steps one block runs (K tiles / split_k)",
    (g) => Math.log2(Math.max(1, Math.ceil(Math.ceil(g.K / g.blockK) / g.splitK))),
  ],
  [
    "gemm.tile_intensity.log2",
    "log2 flops per byte a block tile loads per k-step: block_m x block_n / (2 (block_m + block_n))",
    (g) => Math.log2(g.blockM * g.blockN / (2 * (g.blockM + g.blockN))),
  ],
];

const sms = (t: Readonly<GpuTarget>) => t.smCount ?? 132;
const blocks = (g: GemmPlan) => Math.ceil(g.M / g.blockM) * Math.ceil(g.N / g.blockN) * g.splitK;
function blocksPerSM(g: GemmPlan, t: Readonly<GpuTarget>): number {
  // An SM's shared memory: the opt-in limit per block plus the 1 KiB the driver reserves.
  const bySmem = Math.floor((t.maxSharedBytesPerBlockOptin + 1024) / Math.max(1, g.sharedBytes));
  return Math.max(1, Math.min(32, Math.floor(THREADS_PER_SM / g.threads), bySmem));
}
const waves = (g: GemmPlan, t: Readonly<GpuTarget>) => blocks(g) / (sms(t) * blocksPerSM(g, t));

/** Names of {@link gemmFeatures}, in order. */
export const GEMM_FEATURE_NAMES: readonly string[] = Object.freeze(GEMM_COLUMNS.map(([n]) => n));

/** Every GEMM feature's name with a one-line definition. */
export const GEMM_FEATURE_DOCS: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(GEMM_COLUMNS.map(([n, doc]) => [n, doc])),
);

/**
 * The GEMM features of a schedule (see {@link GEMM_FEATURE_NAMES}): zeros
 * when it carries no `gemm.*` pragma, its workload is not a GEMM, or the
 * target refuses its plan.
 */
export function gemmFeatures(sch: Schedule, target: Readonly<GpuTarget> = H100): number[] {
  const zeros = () => GEMM_COLUMNS.map(() => 0);
  if (!hasGemmPragmas(sch)) return zeros();
  const problem = gemmProblemOf(sch.workload);
  if (!problem) return zeros();
  const values: Record<string, number> = {};
  for (const s of sch.stages) for (const [k, v] of s.pragmas) values[k] = v;
  let plan: GemmPlan;
  try {
    plan = gemmPlan(problem, values, target);
  } catch (e) {
    if (e instanceof ScheduleError) return zeros();
    throw e;
  }
  return GEMM_COLUMNS.map(([, , f]) => f(plan, target));
}
