/**
 * GEMM-class GPU kernels as a parameterized template (as CUTLASS and Triton
 * configurations are): a stage annotated with the `gemm.*` pragmas
 * ({@link GEMM_KNOBS}) is generated whole by `ir/_gemm_emit.ts` instead of
 * from its loop nest. Matmul, dense (bias and ReLU fused in the epilogue) and
 * conv2d (as an implicit GEMM: M = filters, N = batch x output pixels, K =
 * channels x kernel window, the input gathered with zero padding) share it.
 *
 * Why a template and not primitives: the loop-nest IR has no vector types,
 * asynchronous copies, warp-level fragments or multi-buffered shared memory;
 * adding them as primitives (TVM's tensorize, vectorized cache_read,
 * software pipelining) is the larger project. The knobs are still sampling
 * instructions of a trace (`sample_categorical` feeding `annotate`), so every
 * strategy, mutator and cost model of the trace spaces works on them.
 *
 * Knobs: block tile (`block_m` x `block_n` x `block_k`, up to 256 x 256 x 32),
 * warp tile (`warp_m` x `warp_n`: threads = 32 x warps, whole warps always),
 * `lanes_n` (lanes of a warp along N on the FP32 path: 8 x 4 or 4 x 8, so a
 * thread computes (warp_m / (32 / lanes_n)) x (warp_n / lanes_n) outputs, in
 * patches of 4 x 4 read as float4s from shared memory, where A is stored
 * transposed unless it is copied by `cp.async`),
 * `mma` (0: FP32 FMA; 1: TF32 `mma.sync` m16n8k8 with `cvt.rna.tf32.f32`;
 * 2: FP16 and 3: BF16 inputs, `mma.sync` m16n8k16, FP32 accumulation),
 * `load` (0: direct loads into one shared buffer; 1: next tile prefetched
 * into registers during the math, double-buffered; 2: `cp.async` ring of
 * `stages` buffers), `vec` (4: 128-bit global and shared loads where the
 * contiguous extent is a multiple of 4, else a scalar fallback), `pad`
 * (floats added to each shared row against bank conflicts) and `split_k`
 * (K split among `split_k` blocks, partial sums reduced by a second kernel
 * that applies the epilogue: for small outputs) and `min_blocks`
 * (`__launch_bounds__(threads, min_blocks)`: 2 caps a 256-thread kernel at
 * 128 registers so two blocks fit per SM). With FP16 or BF16 `mma` and a
 * load other than `cp.async`, A and B lie in global memory as 16-bit values
 * ({@link GemmPlan.halfInputs}: half the bytes read), converted to FP32 as
 * they are stored into shared memory.
 *
 * Shared memory is dynamic; above 48 KiB the launcher opts in with
 * `cudaFuncSetAttribute` ({@link GpuLaunch.dynamicSharedBytes}).
 *
 * @example
 * ```ts
 * import { gemmKernelOf, GEMM_DEFAULTS } from "./gemm_gpu.ts";
 * import { H100 } from "./target_gpu.ts";
 * import { Schedule } from "./schedule.ts";
 * import { matmul } from "./workloads.ts";
 * import { createPrng } from "./prng.ts";
 * const sch = new Schedule(matmul(256, 256, 256), { prng: createPrng(0) });
 * for (const [key, v] of Object.entries(GEMM_DEFAULTS)) sch.annotate("C", key, v);
 * const k = gemmKernelOf(sch, H100);
 * if (k.gemm.threads !== 256) throw new Error();
 * ```
 * @module
 */
import type { Kernel } from "./ast.ts";
import { ScheduleError } from "./errors.ts";
import type { Schedule } from "./schedule.ts";
import type { GpuLaunch, GpuTarget } from "./target_gpu.ts";
import type { Workload } from "./workloads.ts";

/** Candidate values of every `gemm.*` knob (what the sketch samples). */
export const GEMM_KNOBS: Readonly<Record<string, readonly number[]>> = Object.freeze({
  "gemm.block_m": [32, 64, 128, 256],
  "gemm.block_n": [32, 64, 128, 256],
  "gemm.block_k": [8, 16, 32],
  "gemm.warp_m": [16, 32, 64, 128],
  "gemm.warp_n": [16, 32, 64, 128],
  "gemm.lanes_n": [4, 8],
  "gemm.mma": [0, 1, 2, 3],
  "gemm.load": [0, 1, 2],
  "gemm.stages": [2, 3, 4],
  "gemm.vec": [1, 4],
  "gemm.pad": [0, 4, 8],
  "gemm.split_k": [1, 2, 4, 8],
  "gemm.min_blocks": [1, 2],
});

/** A configuration close to the best hand-written FP32 kernel of the lessons (128x128x16). */
export const GEMM_DEFAULTS: Readonly<Record<string, number>> = Object.freeze({
  "gemm.block_m": 128,
  "gemm.block_n": 128,
  "gemm.block_k": 16,
  "gemm.warp_m": 64,
  "gemm.warp_n": 32,
  "gemm.lanes_n": 4,
  "gemm.mma": 0,
  "gemm.load": 1,
  "gemm.stages": 2,
  "gemm.vec": 4,
  "gemm.pad": 4,
  "gemm.split_k": 1,
  "gemm.min_blocks": 2,
});

/** Names of the `mma` knob's values. */
export const MMA_KINDS = ["fp32", "tf32", "fp16", "bf16"] as const;
/** Names of the `load` knob's values. */
export const LOAD_KINDS = ["direct", "regs", "cp.async"] as const;

/** How the operands of a workload's GEMM are addressed. */
export interface GemmProblem {
  op: "matmul" | "dense" | "conv2d";
  M: number;
  N: number;
  K: number;
  /** Layout of B: `kn` (row-major K x N), `nk` (W of dense, K contiguous) or `gather` (conv input). */
  bLayout: "kn" | "nk" | "gather";
  /** Conv2d dimensions (op "conv2d" only): batch, channels, input and output sizes. */
  conv?: {
    batch: number;
    C: number;
    H: number;
    W: number;
    KH: number;
    KW: number;
    stride: number;
    pad: number;
    OH: number;
    OW: number;
  };
}

/** A checked configuration of one GEMM kernel and its derived sizes. */
export interface GemmPlan extends GemmProblem {
  blockM: number;
  blockN: number;
  blockK: number;
  warpM: number;
  warpN: number;
  lanesN: number;
  mma: 0 | 1 | 2 | 3;
  load: 0 | 1 | 2;
  /** Shared buffers: 1 (direct), 2 (regs), `gemm.stages` (cp.async). */
  stages: number;
  /** Global vector width per operand after the scalar fallback. */
  vecA: 1 | 4;
  vecB: 1 | 4;
  pad: number;
  splitK: number;
  /** Blocks per SM asked of ptxas (`__launch_bounds__(threads, minBlocks)`): caps registers. */
  minBlocks: number;
  threads: number;
  /**
   * A stored transposed in shared memory (`[k][m]`): on the FP32 path
   * without `cp.async` (which cannot transpose), so a k-step reads the
   * thread's rows as float4s along m.
   */
  aTrans: boolean;
  /** Floats per shared stage of A and of B. */
  stageA: number;
  stageB: number;
  /** Bytes of (dynamic) shared memory of the main kernel in CUDA. */
  sharedBytes: number;
  /**
   * A and B stored as 16-bit values (FP16 or BF16, the `mma` input format) in
   * global memory: with `mma` 2 or 3 and `load` direct or regs (`cp.async`
   * copies bytes into the FP32 shared tiles, so it reads FP32).
   */
  halfInputs: boolean;
}

/** A lowered kernel generated by the GEMM template. */
export type GemmKernel = Kernel & { gemm: GemmPlan };

/** True when `k` was generated by {@link gemmKernelOf}. */
export function isGemmKernel(k: Kernel): k is GemmKernel {
  return (k as Partial<GemmKernel>).gemm !== undefined;
}

/** True when a schedule carries `gemm.*` pragmas (it is then a GEMM template point). */
export function hasGemmPragmas(sch: Schedule): boolean {
  return sch.stages.some((s) => [...s.pragmas.keys()].some((k) => k.startsWith("gemm.")));
}

/** The GEMM view of a workload, or undefined for workloads the template does not cover. */
export function gemmProblemOf(w: Workload): GemmProblem | undefined {
  const s = w.shape;
  if (w.name === "matmul") return { op: "matmul", M: s[0], N: s[1], K: s[2], bLayout: "kn" };
  if (w.name === "dense") return { op: "dense", M: s[0], N: s[1], K: s[2], bLayout: "nk" };
  if (w.name === "conv2d") {
    const [batch, C, H, W, F, KH, KW, stride, pad] = s;
    const OH = Math.floor((H + 2 * pad - KH) / stride) + 1;
    const OW = Math.floor((W + 2 * pad - KW) / stride) + 1;
    return {
      op: "conv2d",
      M: F,
      N: batch * OH * OW,
      K: C * KH * KW,
      bLayout: "gather",
      conv: { batch, C, H, W, KH, KW, stride, pad, OH, OW },
    };
  }
  return undefined;
}

/** Tolerances a GEMM kernel's output is checked with: looser for tensor-core inputs. */
export function gemmTolerance(k: Kernel): { atol: number; rtol: number } | undefined {
  if (!isGemmKernel(k) || k.gemm.mma === 0) return undefined;
  const rtol = k.gemm.mma === 3 ? 1e-2 : 2e-3;
  return { atol: rtol * Math.sqrt(k.gemm.K), rtol };
}

const choose = <T extends number>(v: number, of: readonly T[], what: string): T => {
  if (!of.includes(v as T)) throw new ScheduleError(`gemm.${what} ${v} is not one of ${of}`);
  return v as T;
};

/**
 * Checks a configuration (pragma values by key) on a problem and a target;
 * throws {@link ScheduleError} naming the knob and the limit.
 */
export function gemmPlan(
  p: GemmProblem,
  values: Record<string, number>,
  target: Readonly<GpuTarget>,
): GemmPlan {
  const get = (k: string) => {
    const v = values[`gemm.${k}`];
    if (v === undefined) throw new ScheduleError(`The gemm template needs the pragma gemm.${k}`);
    return choose(v, GEMM_KNOBS[`gemm.${k}`], k);
  };
  const [blockM, blockN, blockK] = [get("block_m"), get("block_n"), get("block_k")];
  const [warpM, warpN, lanesN] = [get("warp_m"), get("warp_n"), get("lanes_n")];
  const mma = get("mma") as GemmPlan["mma"], load = get("load") as GemmPlan["load"];
  const vec = get("vec"), pad = get("pad"), splitK = get("split_k");
  const minBlocks = get("min_blocks");
  const stages = load === 0 ? 1 : load === 1 ? 2 : get("stages");
  const bad = (why: string) => new ScheduleError(`gemm template: ${why}`);
  if (blockM % warpM || blockN % warpN) {
    throw bad(`warp tile ${warpM}x${warpN} does not divide block tile ${blockM}x${blockN}`);
  }
  const warps = (blockM / warpM) * (blockN / warpN), threads = 32 * warps;
  if (threads > target.maxThreadsPerBlock) {
    throw bad(
      `${threads} threads per block exceed the ${target.maxThreadsPerBlock} of ${target.name}`,
    );
  }
  let acc: number;
  if (mma === 0) {
    const lanesM = 32 / lanesN;
    if (warpM % lanesM || warpN % lanesN) {
      throw bad(`warp tile ${warpM}x${warpN} does not fit ${lanesM}x${lanesN} lanes`);
    }
    acc = (warpM / lanesM) * (warpN / lanesN);
  } else {
    const ks = mma === 1 ? 8 : 16;
    if (blockK % ks) throw bad(`block_k ${blockK} is not a multiple of the mma k ${ks}`);
    acc = warpM * warpN / 32;
  }
  if (acc > 128) throw bad(`${acc} accumulators per thread (at most 128 fit in registers)`);
  const kTiles = Math.ceil(p.K / blockK);
  if (splitK > kTiles) throw bad(`split_k ${splitK} exceeds the ${kTiles} tiles of K`);
  // Kernels index with 32-bit ints.
  if (Math.max(p.M * p.K, p.K * p.N, p.M * p.N * splitK) >= 2 ** 31) {
    throw bad(`a ${p.M}x${p.N}x${p.K} product with split_k ${splitK} needs 64-bit indices`);
  }
  const vecA: 1 | 4 = vec === 4 && p.K % 4 === 0 ? 4 : 1;
  const vecB: 1 | 4 = vec === 4 && p.bLayout !== "gather" &&
      (p.bLayout === "kn" ? p.N % 4 === 0 : p.K % 4 === 0)
    ? 4
    : 1;
  const aTrans = mma === 0 && load !== 2;
  const stageA = aTrans ? blockK * (blockM + pad) : blockM * (blockK + pad);
  const stageB = p.bLayout === "nk" ? blockN * (blockK + pad) : blockK * (blockN + pad);
  const sharedBytes = stages * (stageA + stageB) * 4;
  if (sharedBytes > target.maxSharedBytesPerBlockOptin) {
    throw bad(
      `${sharedBytes} bytes of shared memory exceed the ${target.maxSharedBytesPerBlockOptin} of ${target.name}`,
    );
  }
  const gridM = Math.ceil(p.M / blockM);
  if (gridM > target.maxGridDim[1]) throw bad(`${gridM} blocks along M exceed the grid limit`);
  return {
    ...p,
    blockM,
    blockN,
    blockK,
    warpM,
    warpN,
    lanesN,
    mma,
    load,
    stages,
    vecA,
    vecB,
    pad,
    splitK,
    minBlocks,
    threads,
    aTrans,
    stageA,
    stageB,
    sharedBytes,
    halfInputs: mma >= 2 && load !== 2,
  };
}

/**
 * The GEMM kernel of a schedule whose stage carries `gemm.*` pragmas: its
 * parameters (named as `lower` names them: `T_<tensor>`), the split-K
 * workspace as a temporary, and the checked plan. Other schedule primitives
 * cannot be combined with the template.
 */
export function gemmKernelOf(sch: Schedule, target: Readonly<GpuTarget>): GemmKernel {
  const w = sch.workload;
  const p = gemmProblemOf(w);
  if (!p) throw new ScheduleError(`The gemm template does not cover workload ${w.name}`);
  const other = sch.trace.find((i) => i.op !== "annotate" && i.op !== "sample_categorical");
  if (other) {
    throw new ScheduleError(
      `The gemm template generates the whole kernel: "${other.op}" cannot be combined with it`,
    );
  }
  const values: Record<string, number> = {};
  for (const s of sch.stages) for (const [k, v] of s.pragmas) values[k] = v;
  const plan = gemmPlan(p, values, target);
  const params: Kernel["params"] = [
    ...w.inputs.map((t) => ({
      buf: `T_${t.name}`,
      tensor: t.name,
      size: t.size,
      role: "input" as const,
    })),
    ...w.outputs.map((t) => ({
      buf: `T_${t.name}`,
      tensor: t.name,
      size: t.size,
      role: "output" as const,
    })),
  ];
  // A and B are the first two parameters (conv2d: the input, B, then the filters, A).
  if (plan.halfInputs) {
    const storage = plan.mma === 2 ? "f16" : "bf16";
    params[0] = { ...params[0], storage };
    params[1] = { ...params[1], storage };
  }
  const temps = plan.splitK > 1 ? [{ buf: "T_splitk", size: plan.splitK * p.M * p.N }] : [];
  return { params, temps, body: [], gemm: plan };
}

/** The launches of a GEMM kernel: the main kernel, then the split-K reduction. */
export function gemmLaunches(k: GemmKernel, prefix = "tb"): GpuLaunch[] {
  const g = k.gemm;
  const main: GpuLaunch = {
    name: `${prefix}_k0`,
    stage: k.params[k.params.length - 1].tensor,
    body: [],
    grid: [Math.ceil(g.N / g.blockN), Math.ceil(g.M / g.blockM), g.splitK],
    block: [g.threads, 1, 1],
    sharedBytes: g.sharedBytes,
    dynamicSharedBytes: g.sharedBytes,
  };
  if (g.splitK === 1) return [main];
  return [main, {
    name: `${prefix}_k1`,
    stage: main.stage,
    body: [],
    grid: [Math.ceil((g.M * g.N) / 256), 1, 1],
    block: [256, 1, 1],
    sharedBytes: 0,
  }];
}
