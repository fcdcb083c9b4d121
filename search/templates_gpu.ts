/**
 * GPU knob templates (AutoTVM's CUDA templates): a schedule written once as
 * a function of named knobs, whose points are GPU schedules with thread
 * bindings and a register accumulator.
 *
 * - `matmul-gpu`: `tile_i`, `tile_j` split in four (block, virtual thread,
 *   thread, register tile), `tile_k` in three, `auto_unroll`,
 *   `unroll_explicit` (AutoTVM's dense/matmul CUDA template) and `shared`
 *   (tiles of A and B staged in shared memory per outer k step, fetched
 *   cooperatively by the block's threads);
 * - `conv2d-gpu`: `tile_f`, `tile_y`, `tile_x` in four, `tile_rc`, `tile_ry`,
 *   `tile_rx` in two, `auto_unroll`, `unroll_explicit` (AutoTVM's
 *   conv2d_nchw direct CUDA template), padding inlined;
 * - `gemm-gpu` (the default for matmul, dense and conv2d): the knobs of the
 *   GEMM-class template of `ir/gemm_gpu.ts` (block and warp tiles, float4 or
 *   `cp.async` pipelines, tensor cores, split-K), valid where
 *   `gemmPlan` accepts them.
 *
 * `math` ({@link GpuTemplateOptions.math}) limits `gemm-gpu`'s `mma` knob to
 * the kinds of arithmetic it allows; the loop-nest templates compute in
 * FP32 and need it allowed.
 *
 * Points whose threads per block exceed the target's limit, whose register
 * tile exceeds `maxRegisterTile` floats, or whose shared tiles exceed the
 * shared memory per block, are not in the space.
 *
 * @example
 * ```ts
 * import { gpuTemplateSpace } from "./templates_gpu.ts";
 * import { matmul } from "../ir/workloads.ts";
 * const t = gpuTemplateSpace("matmul-gpu", matmul(256, 256, 256));
 * const c = t.candidateOf(t.space.point(0));
 * if (!c.trace?.insts.some((i) => i.op === "bind")) throw new Error();
 * ```
 * @module
 */
import { ScheduleError } from "../ir/errors.ts";
import { GEMM_KNOBS, gemmPlan, gemmProblemOf } from "../ir/gemm_gpu.ts";
import { ALL_MATH, type MathKind, mmaValues } from "../ir/gemm_math.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { H100 } from "../ir/target_gpu.ts";
import { traceOf } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";
import { type Knob, KnobSpace, type Point, pointOfValues, splitOptions } from "./knobs.ts";
import type { Candidate } from "./strategy.ts";
import type { TemplateSpace } from "./templates.ts";

/** Largest per-thread register tile (product of the innermost spatial factors). */
export const MAX_REGISTER_TILE = 64;

const UNROLL_STEPS = [0, 16, 64, 512, 1500];

interface GpuTemplate {
  workloads: string[];
  /** The knobs on a workload, for the arithmetic allowed (a RangeError when none fits). */
  knobs(w: Workload, math: readonly MathKind[]): Knob[];
  /** Threads per block, register-tile floats and shared bytes of a point's values. */
  shape(v: Record<string, unknown>): { threads: number; tile: number; sharedBytes?: number };
  apply(sch: Schedule, v: Record<string, unknown>): void;
  /** Throws ScheduleError for a point the target cannot run (instead of `shape`'s limits). */
  check?(w: Workload, v: Record<string, unknown>, maxThreads: number, maxShared: number): void;
}

/** Loop-nest templates compute in FP32: refused when `math` does not allow it. */
function fp32Only(name: string, math: readonly MathKind[]): void {
  if (!math.includes("fp32")) {
    throw new RangeError(
      `Template "${name}" computes in fp32, which math ${math.join(",")} leaves out`,
    );
  }
}

const reductionStage = (w: Workload) => ({ matmul: "C", dense: "D", conv2d: "O" })[w.name]!;

const TEMPLATES: Record<string, GpuTemplate> = {
  "gemm-gpu": {
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
  },
  "matmul-gpu": {
    workloads: ["matmul"],
    knobs: (w, math) => {
      fp32Only("matmul-gpu", math);
      const [M, N, K] = w.shape;
      return [
        { name: "tile_i", kind: "split", options: splitOptions(M, 4, 8) },
        { name: "tile_j", kind: "split", options: splitOptions(N, 4, 8) },
        { name: "tile_k", kind: "split", options: splitOptions(K, 3, 16) },
        { name: "auto_unroll", kind: "annotate", options: UNROLL_STEPS },
        { name: "unroll_explicit", kind: "annotate", options: [0, 1] },
        { name: "shared", kind: "other", options: [0, 1] },
      ];
    },
    shape: (v) => {
      const [ti, tj, tk] = [v.tile_i, v.tile_j, v.tile_k] as number[][];
      const kt = tk[1] * tk[2];
      const sharedBytes = v.shared === 1 ? (ti[2] * ti[3] + tj[2] * tj[3]) * kt * 4 : 0;
      return { threads: ti[2] * tj[2], tile: ti[3] * tj[3], sharedBytes };
    },
    apply: (sch, v) => {
      const [ti, tj, tk] = [v.tile_i, v.tile_j, v.tile_k] as number[][];
      const local = sch.cacheWrite("C");
      const shared = v.shared === 1
        ? [sch.cacheRead("A", "shared", [local]), sch.cacheRead("B", "shared", [local])]
        : [];
      const [i0, i1, i2, i3] = sch.split("C", "i", ti);
      const [j0, j1, j2, j3] = sch.split("C", "j", tj);
      sch.reorder("C", [i0, j0, i1, j1, i2, j2, i3, j3]);
      sch.bind("C", i0, "blockIdx.y");
      sch.bind("C", j0, "blockIdx.x");
      sch.bind("C", i2, "threadIdx.y");
      sch.bind("C", j2, "threadIdx.x");
      sch.computeAt(local, "C", j2);
      const [k0, k1, k2] = sch.split(local, "k", tk);
      sch.reorder(local, [k0, k1, k2, "i", "j"]);
      if (v.unroll_explicit === 1 && tk[2] > 1) sch.unroll(local, k2);
      sch.autoUnroll(local, v.auto_unroll as number);
      sch.autoUnroll("C", 64);
      // Tiles of A and B in shared memory per k0 step, fetched by all threads of the block.
      for (const copy of shared) {
        sch.computeAt(copy, local, k0);
        const fused = sch.fuse(copy, ["ax0", "ax1"]);
        const [, ty, tx] = sch.split(copy, fused, [null, ti[2], tj[2]]);
        sch.bind(copy, ty, "threadIdx.y");
        sch.bind(copy, tx, "threadIdx.x");
      }
    },
  },
  "conv2d-gpu": {
    workloads: ["conv2d"],
    knobs: (w, math) => {
      fp32Only("conv2d-gpu", math);
      const [, C, H, W, F, KH, KW, stride, pad] = w.shape;
      const OH = Math.floor((H + 2 * pad - KH) / stride) + 1;
      const OW = Math.floor((W + 2 * pad - KW) / stride) + 1;
      return [
        { name: "tile_f", kind: "split", options: splitOptions(F, 4, 8) },
        { name: "tile_y", kind: "split", options: splitOptions(OH, 4, 8) },
        { name: "tile_x", kind: "split", options: splitOptions(OW, 4, 8) },
        { name: "tile_rc", kind: "split", options: splitOptions(C, 2, 16) },
        { name: "tile_ry", kind: "split", options: splitOptions(KH, 2) },
        { name: "tile_rx", kind: "split", options: splitOptions(KW, 2) },
        { name: "auto_unroll", kind: "annotate", options: UNROLL_STEPS },
        { name: "unroll_explicit", kind: "annotate", options: [0, 1] },
      ];
    },
    shape: (v) => {
      const [tf, ty, tx] = [v.tile_f, v.tile_y, v.tile_x] as number[][];
      return { threads: tf[2] * ty[2] * tx[2], tile: tf[3] * ty[3] * tx[3] };
    },
    apply: (sch, v) => {
      const [tf, ty, tx, trc, try_, trx] = [
        v.tile_f,
        v.tile_y,
        v.tile_x,
        v.tile_rc,
        v.tile_ry,
        v.tile_rx,
      ] as number[][];
      if (sch.stages.some((s) => s.name === "P")) sch.computeInline("P");
      const local = sch.cacheWrite("O");
      const [f0, f1, f2, f3] = sch.split("O", "f", tf);
      const [y0, y1, y2, y3] = sch.split("O", "y", ty);
      const [x0, x1, x2, x3] = sch.split("O", "x", tx);
      sch.reorder("O", ["n", f0, y0, x0, f1, y1, x1, f2, y2, x2, f3, y3, x3]);
      sch.bind("O", sch.fuse("O", ["n", f0]), "blockIdx.z");
      sch.bind("O", y0, "blockIdx.y");
      sch.bind("O", x0, "blockIdx.x");
      sch.bind("O", f2, "threadIdx.z");
      sch.bind("O", y2, "threadIdx.y");
      sch.bind("O", x2, "threadIdx.x");
      sch.computeAt(local, "O", x2);
      const [rc0, rc1] = sch.split(local, "rc", trc);
      const [ry0, ry1] = sch.split(local, "ry", try_);
      const [rx0, rx1] = sch.split(local, "rx", trx);
      sch.reorder(local, [rc0, ry0, rx0, rc1, ry1, rx1, "n", "f", "y", "x"]);
      if (v.unroll_explicit === 1 && trx[1] > 1) sch.unroll(local, rx1);
      sch.autoUnroll(local, v.auto_unroll as number);
      sch.autoUnroll("O", 64);
    },
  },
};

/** Names of the GPU knob templates. */
export const GPU_TEMPLATE_NAMES: readonly string[] = [
  ...Object.keys(TEMPLATES).filter((n) => n !== "gemm-gpu"),
  "gemm-gpu",
];

/** Options of {@link gpuTemplateSpace}. */
export interface GpuTemplateOptions {
  /** Most threads per block. Default the H100's 1024. */
  maxThreadsPerBlock?: number;
  /** Largest per-thread register tile in floats. Default {@link MAX_REGISTER_TILE}. */
  maxRegisterTile?: number;
  /**
   * Most shared memory per block in bytes. Default the H100's 48 KiB (no
   * opt-in), or its 227 KiB opt-in for `gemm-gpu`, whose launcher opts in.
   */
  maxSharedBytes?: number;
  /** Arithmetic the points may use (`ir/gemm_math.ts`). Default every kind. */
  math?: readonly MathKind[];
}

/** The knob space of a GPU template on a workload (invalid points excluded). */
export function gpuTemplateSpace(
  name: string,
  w: Workload,
  options: GpuTemplateOptions = {},
): TemplateSpace {
  const t = Object.hasOwn(TEMPLATES, name) ? TEMPLATES[name] : undefined;
  if (!t) {
    throw new RangeError(
      `Unknown GPU template "${name}"; known: ${GPU_TEMPLATE_NAMES.join(", ")}`,
    );
  }
  if (!t.workloads.includes(w.name)) {
    throw new RangeError(`Template "${name}" schedules ${t.workloads.join(", ")}, not ${w.name}`);
  }
  const maxThreads = options.maxThreadsPerBlock ?? H100.maxThreadsPerBlock;
  const maxTile = options.maxRegisterTile ?? MAX_REGISTER_TILE;
  const maxShared = options.maxSharedBytes ??
    (t.check ? H100.maxSharedBytesPerBlockOptin : H100.maxSharedBytesPerBlock);
  const math = options.math ?? ALL_MATH;
  if (math.length === 0) throw new RangeError("math: a GPU template needs at least one kind");
  const space = new KnobSpace(t.knobs(w, math), {
    isValid: (v) => {
      if (t.check) {
        try {
          t.check(w, v, maxThreads, maxShared);
          return true;
        } catch (e) {
          if (e instanceof ScheduleError) return false;
          throw e;
        }
      }
      const { threads, tile, sharedBytes = 0 } = t.shape(v);
      return threads <= maxThreads && tile <= maxTile && sharedBytes <= maxShared;
    },
  });
  return {
    name,
    workload: w,
    space,
    candidateOf(point: Point): Candidate {
      const sch = new Schedule(w, { prng: createPrng(0) });
      t.apply(sch, space.values(point));
      return { knobs: [...point], trace: traceOf(sch) };
    },
  };
}

/**
 * The GPU template of a workload, if there is one: `gemm-gpu` (the GEMM-class
 * template) for matmul, dense and conv2d.
 */
export function defaultGpuTemplate(w: Workload): string | undefined {
  if (TEMPLATES["gemm-gpu"].workloads.includes(w.name)) return "gemm-gpu";
  return GPU_TEMPLATE_NAMES.find((n) => TEMPLATES[n].workloads.includes(w.name));
}

/**
 * The point of a `gemm-gpu` space whose knobs take `values` (`gemm.*` pragma
 * values, as `ir/gemm_gpu.ts` and `search/gemm_configs.ts` write them: a
 * configuration of the GEMM template as a point a knob strategy can learn
 * from); undefined when a value is not among its knob's options (an `mma`
 * kind the run's math leaves out) or the point is not valid.
 *
 * @example
 * ```ts
 * import { gemmPointOf, gpuTemplateSpace } from "./templates_gpu.ts";
 * import { GEMM_DEFAULTS } from "../ir/gemm_gpu.ts";
 * import { matmul } from "../ir/workloads.ts";
 * const t = gpuTemplateSpace("gemm-gpu", matmul(1024, 1024, 1024));
 * const p = gemmPointOf(t.space, GEMM_DEFAULTS)!;
 * if (t.space.values(p).block_m !== 128) throw new Error();
 * if (gemmPointOf(t.space, { ...GEMM_DEFAULTS, "gemm.block_m": 96 }) !== undefined) throw new Error();
 * ```
 */
export function gemmPointOf(
  space: KnobSpace,
  values: Readonly<Record<string, number>>,
): Point | undefined {
  const byKnob = Object.fromEntries(
    Object.entries(values).map(([k, v]) => [k.replace(/^gemm\./, ""), v]),
  );
  const point = pointOfValues(space.knobs, byKnob);
  return point && space.isValid(point) ? point : undefined;
}

/**
 * Threads per block, register-tile floats and shared bytes of a point of a
 * GPU template (what its validity is decided on).
 */
export function pointShape(
  name: string,
  values: Record<string, unknown>,
): { threads: number; tile: number; sharedBytes: number } {
  const { threads, tile, sharedBytes = 0 } = TEMPLATES[name].shape(values);
  return { threads, tile, sharedBytes };
}
