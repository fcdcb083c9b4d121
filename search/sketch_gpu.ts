/**
 * Sketches of the default GPU space, after MetaSchedule's CUDA rules:
 * multi-level tiling "SSSRRSRS" of the reduction stage (spatial tiles for
 * blockIdx, a virtual-thread level, threadIdx; then reduction, reduction,
 * spatial, reduction, spatial inside the thread), with the accumulator in
 * per-thread registers (cache_write "local" computed at the thread loop, or
 * the reduction computed at the thread loop of its element-wise consumer),
 * optionally every input of the reduction staged in shared memory per outer
 * reduction step (cache_read "shared", fetched cooperatively by the block),
 * element-wise producers (padding) inlined, and a sampled auto-unroll step.
 *
 * Half of the samples (`gemmShare`) come from the GEMM template sketch
 * ({@link gemmSketch}) where the workload is a GEMM (matmul, dense, conv2d
 * as an implicit GEMM): block tiles up to 256x256, warp tiles, float4 and
 * `cp.async` pipelines, tensor cores (TF32, FP16, BF16 `mma.sync`) and
 * split-K as sampled decisions.
 *
 * `math` ({@link GpuSketchOptions.math}) limits the arithmetic: the `gemm.mma`
 * values sampled are the kinds it allows, and without `fp32` every sample
 * comes from the GEMM sketch (the loop nests compute in FP32).
 *
 * Sampling is followed by the GPU postprocessor {@link verifyGpu}: a sample
 * that breaks a limit of the target (threads per block above 1024, …) is
 * drawn again, as MetaSchedule's VerifyGPUCode postprocessor does; a mutated
 * trace passes the same check (`postprocess`), so the evolutionary search
 * proposes no schedule the target refuses.
 *
 * The virtual-thread level is a serial loop between the block and thread
 * levels: each thread computes several register tiles a block-tile apart.
 *
 * @example
 * ```ts
 * import { gpuSpace } from "./sketch_gpu.ts";
 * import { matmul } from "../ir/workloads.ts";
 * import { createPrng } from "../ir/prng.ts";
 * const space = gpuSpace(matmul(256, 256, 256));
 * const trace = space.sample(createPrng(1));
 * if (!trace.insts.some((i) => i.op === "bind")) throw new Error();
 * ```
 * @module
 */
import { ScheduleError } from "../ir/errors.ts";
import { GEMM_KNOBS, gemmProblemOf } from "../ir/gemm_gpu.ts";
import { ALL_MATH, type MathKind, mmaValues } from "../ir/gemm_math.ts";
import type { Prng } from "../ir/prng.ts";
import type { Schedule } from "../ir/schedule.ts";
import { readsOf } from "../ir/stage.ts";
import { type GpuTarget, H100, verifyGpu } from "../ir/target_gpu.ts";
import { Expr } from "../ir/te.ts";
import { replayTrace, type Trace } from "../ir/trace.ts";
import { computeStages, type Workload } from "../ir/workloads.ts";
import { verify } from "./mutators.ts";
import { type DesignSpace, type Sketch, traceSpace } from "./space.ts";

/** Tunable limits of the GPU sketches. */
export interface GpuSketchOptions {
  /** The device whose limits samples must respect. Default {@link H100}. */
  target: Readonly<GpuTarget>;
  /** Largest innermost spatial tile (per-thread register tile per axis). Default 4. */
  maxInner: number;
  /** Largest innermost reduction tile. Default 16. */
  maxInnerReduce: number;
  /** Candidate `auto_unroll_max_step` values. Default [0, 16, 64, 512, 1024]. */
  unrollSteps: number[];
  /** Samples drawn before giving up on a valid one. Default 200. */
  maxAttempts: number;
  /**
   * Share of samples drawn from the GEMM template sketch (`gemm`), for
   * workloads it covers (matmul, dense, conv2d); the rest come from the
   * loop-nest sketches. Default 0.5; 0 leaves it out.
   */
  gemmShare: number;
  /**
   * Arithmetic the kernels may use (`ir/gemm_math.ts`). Default every kind;
   * `["fp32"]` keeps FP32 FMA kernels only.
   */
  math: readonly MathKind[];
}

const DEFAULTS: GpuSketchOptions = {
  target: H100,
  maxInner: 4,
  maxInnerReduce: 16,
  unrollSteps: [0, 16, 64, 512, 1024],
  maxAttempts: 200,
  gemmShare: 0.5,
  math: ALL_MATH,
};

/**
 * The default GPU design space of a workload: samples of {@link gpuSketchesOf}
 * that pass {@link verifyGpu} on the target.
 */
export function gpuSpace(w: Workload, options: Partial<GpuSketchOptions> = {}): DesignSpace {
  const o = { ...DEFAULTS, ...options };
  if (o.math.length === 0) throw new RangeError("math: a GPU space needs at least one kind");
  // The loop-nest sketches compute in FP32: without it, every sample is a GEMM template point.
  const fp32 = o.math.includes("fp32");
  const gemmShare = fp32 ? o.gemmShare : 1;
  if (!gemmProblemOf(w) && !fp32) {
    throw new RangeError(
      `math ${
        o.math.join(",")
      }: ${w.name} has no GEMM template, and its GPU kernels compute in fp32`,
    );
  }
  const inner = traceSpace(w, gpuSketchesOf(w, o));
  const gemm = gemmShare > 0 && gemmProblemOf(w)
    ? traceSpace(w, { gemm: (sch) => gemmSketch(sch, o.target, o.math) })
    : undefined;
  return {
    workload: w,
    sketches: [
      ...(gemmShare < 1 || !gemm ? inner.sketches : []),
      ...(gemm ? gemm.sketches : []),
    ],
    sample(prng: Prng): Trace {
      let last = "";
      for (let i = 0; i < o.maxAttempts; i++) {
        try {
          // A sketch can fail while sampling (a block's threads above a shared copy's extent).
          const trace = gemm && prng.next() < gemmShare ? gemm.sample(prng) : inner.sample(prng);
          verifyGpu(replayTrace(trace, { prng }), o.target);
          return trace;
        } catch (e) {
          if (!(e instanceof ScheduleError)) throw e;
          last = e.message;
        }
      }
      throw new Error(
        `No valid GPU schedule of ${w.name} in ${o.maxAttempts} samples; last problem: ${last}`,
      );
    },
    postprocess: (trace: Trace, prng: Prng) =>
      verify(trace, prng, (sch) => verifyGpu(sch, o.target)),
  };
}

/** The GPU sketches that apply to a workload, by name. */
export function gpuSketchesOf(
  w: Workload,
  o: GpuSketchOptions = DEFAULTS,
): Record<string, Sketch> {
  const reduction = computeStages(w).reverse().find((t) => t.reduce !== undefined);
  if (!reduction) return { "elementwise": (sch) => elementwise(sch) };
  const name = reduction.name;
  return {
    "SSSRRSRS+local+shared": (sch) => {
      const s = sch.stage(name);
      const [outer, inner] = s.isOutput
        ? [name, sch.cacheWrite(name)]
        : [sch.consumers(s)[0].name, name];
      // Stage every tensor the reduction reads in shared memory (before padding is
      // inlined: the copy of the padded input then computes the padding).
      const copies = readsOf(sch.stage(inner)).map((t) => sch.cacheRead(t, "shared", [inner]));
      inlineProducers(sch);
      tileWithLocal(sch, outer, inner, o, copies);
    },
    "SSSRRSRS+local": (sch) => {
      inlineProducers(sch);
      const s = sch.stage(name);
      if (s.isOutput) tileWithLocal(sch, name, sch.cacheWrite(name), o);
      else tileWithLocal(sch, sch.consumers(s)[0].name, name, o);
    },
    "SSSRRSRS": (sch) => {
      inlineProducers(sch);
      const s = sch.stage(name);
      if (!s.isOutput) {
        tileWithLocal(sch, sch.consumers(s)[0].name, name, o);
        return;
      }
      tileDirect(sch, name, o);
    },
  };
}

/**
 * The GEMM template sketch (`ir/gemm_gpu.ts`): every `gemm.*` knob sampled
 * (`sample_categorical`, uniform) and annotated on the reduction stage. Warp
 * tiles are drawn among those no larger than the block tile, and split-K
 * only where the block tiles leave SMs idle, up to 4 blocks per SM (a rule
 * in the spirit of MetaSchedule's: splitting K of a large output only adds
 * a workspace and a second kernel). `math` limits the `gemm.mma` values
 * (default every kind). With `fixed` (values by `gemm.*` key), each of its
 * keys takes that value as the decision of its sampling instruction: the
 * trace of a chosen configuration that is still a sample of the sketch
 * (mutations and cost models treat it as any other); a value the sketch
 * would not draw there is a ScheduleError.
 */
export function gemmSketch(
  sch: Schedule,
  target: Readonly<GpuTarget> = H100,
  math: readonly MathKind[] = ALL_MATH,
  fixed: Readonly<Record<string, number>> = {},
): void {
  const stage = computeStages(sch.workload).reverse().find((t) => t.reduce !== undefined)!.name;
  const { M, N } = gemmProblemOf(sch.workload)!;
  const sms = target.smCount ?? 132;
  const value: Record<string, number> = {};
  const mma = mmaValues(math);
  const allowed = (key: string, v: number): boolean => {
    if (key === "gemm.mma") return mma.includes(v);
    if (key === "gemm.warp_m") return v <= value["gemm.block_m"];
    if (key === "gemm.warp_n") return v <= value["gemm.block_n"];
    if (key === "gemm.split_k" && v > 1) {
      const blocks = Math.ceil(M / value["gemm.block_m"]) * Math.ceil(N / value["gemm.block_n"]);
      return blocks < sms && blocks * v <= 4 * sms;
    }
    return true;
  };
  for (const [key, all] of Object.entries(GEMM_KNOBS)) {
    const cands = all.filter((v) => allowed(key, v));
    const decision = fixed[key] === undefined ? undefined : cands.indexOf(fixed[key]);
    if (decision === -1) {
      throw new ScheduleError(`gemm sketch: ${key} ${fixed[key]} is not one of ${cands} here`);
    }
    const rv = sch.sampleCategorical(cands, cands.map(() => 1), decision);
    value[key] = sch.value(rv) as number;
    sch.annotate(stage, key, rv);
  }
}

/** Inlines every element-wise stage that is not an output (padding, bias). */
function inlineProducers(sch: Schedule): void {
  for (const s of [...sch.stages]) {
    if (s.isOutput || !(s.body instanceof Expr) || s.attach.k !== "root") continue;
    if (s.scope === "global") sch.computeInline(s.name);
  }
}

const level = (xs: string[][], l: number) => xs.map((x) => x[l]);

/** Fuses `loops` (when more than one) and binds the result to `axis`; returns the loop. */
function fuseBind(
  sch: Schedule,
  stage: string,
  loops: string[],
  axis: "blockIdx.x" | "threadIdx.x",
): string {
  const l = loops.length > 1 ? sch.fuse(stage, loops) : loops[0];
  sch.bind(stage, l, axis);
  return l;
}

/**
 * `outer` tiled S S S S (block, virtual thread, thread, register tile) with
 * `inner` (the reduction, per-thread) computed at the thread loop and tiled
 * R R S R S: the SSSRRSRS structure with a register accumulator.
 */
function tileWithLocal(
  sch: Schedule,
  outer: string,
  inner: string,
  o: GpuSketchOptions,
  copies: string[] = [],
): void {
  const spatial = sch.stage(outer).axes.map((a) => a.name);
  const S = spatial.map((ax) =>
    sch.split(outer, ax, sch.samplePerfectTile(outer, ax, 4, o.maxInner))
  );
  sch.reorder(outer, [...level(S, 0), ...level(S, 1), ...level(S, 2), ...level(S, 3)]);
  fuseBind(sch, outer, level(S, 0), "blockIdx.x");
  const t = fuseBind(sch, outer, level(S, 2), "threadIdx.x");
  sch.computeAt(inner, outer, t);
  const s = sch.stage(inner);
  const ispatial = s.axes.map((a) => a.name), reduce = s.reduceAxes.map((a) => a.name);
  const R = reduce.map((ax) =>
    sch.split(inner, ax, sch.samplePerfectTile(inner, ax, 3, o.maxInnerReduce))
  );
  const IS = ispatial.map((ax) =>
    sch.split(inner, ax, sch.samplePerfectTile(inner, ax, 2, o.maxInner))
  );
  sch.reorder(inner, [
    ...level(R, 0),
    ...level(R, 1),
    ...level(IS, 0),
    ...level(R, 2),
    ...level(IS, 1),
  ]);
  sch.autoUnroll(inner, sch.sampleCategorical(o.unrollSteps, o.unrollSteps.map(() => 1)));
  sch.autoUnroll(outer, 64);
  // Shared copies per outer reduction step, fetched by all threads of the block.
  const threads = sch.stage(outer).leaves.find((l) => l.name === t)!.extent;
  const r0 = level(R, 0);
  for (const copy of copies) {
    sch.computeAt(copy, inner, r0[r0.length - 1]);
    const axes = sch.loops(copy);
    const fused = axes.length > 1 ? sch.fuse(copy, axes) : axes[0];
    const [, tx] = sch.split(copy, fused, [null, threads]);
    sch.bind(copy, tx, "threadIdx.x");
  }
}

/** SSSRRSRS on the output itself: the reduction accumulates in global memory. */
function tileDirect(sch: Schedule, stage: string, o: GpuSketchOptions): void {
  const s = sch.stage(stage);
  const spatial = s.axes.map((a) => a.name), reduce = s.reduceAxes.map((a) => a.name);
  const S = spatial.map((ax) =>
    sch.split(stage, ax, sch.samplePerfectTile(stage, ax, 5, o.maxInner))
  );
  const R = reduce.map((ax) =>
    sch.split(stage, ax, sch.samplePerfectTile(stage, ax, 3, o.maxInnerReduce))
  );
  sch.reorder(stage, [
    ...level(S, 0),
    ...level(S, 1),
    ...level(S, 2),
    ...level(R, 0),
    ...level(R, 1),
    ...level(S, 3),
    ...level(R, 2),
    ...level(S, 4),
  ]);
  fuseBind(sch, stage, level(S, 0), "blockIdx.x");
  fuseBind(sch, stage, level(S, 2), "threadIdx.x");
  sch.autoUnroll(stage, sch.sampleCategorical(o.unrollSteps, o.unrollSteps.map(() => 1)));
}

/** Element-wise workloads: the fused output split into blocks of threads. */
function elementwise(sch: Schedule): void {
  const out = sch.stages[sch.stages.length - 1];
  const axes = out.axes.map((a) => a.name);
  const fused = axes.length > 1 ? sch.fuse(out.name, axes) : axes[0];
  const [b, t] = sch.split(out.name, fused, sch.samplePerfectTile(out.name, fused, 2, 1024));
  sch.bind(out.name, b, "blockIdx.x");
  sch.bind(out.name, t, "threadIdx.x");
}
