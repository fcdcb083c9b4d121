/**
 * The registry of the GPU knob templates (AutoTVM's CUDA templates; one file
 * each in this folder): a schedule written once as
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
 * import { gpuTemplateSpace } from "./registry_gpu.ts";
 * import { matmul } from "../../ir/workloads.ts";
 * const t = gpuTemplateSpace("matmul-gpu", matmul(256, 256, 256));
 * const c = t.candidateOf(t.space.point(0));
 * if (!c.trace?.insts.some((i) => i.op === "bind")) throw new Error();
 * ```
 * @module
 */
import { ScheduleError } from "../../ir/errors.ts";
import { ALL_MATH, type MathKind } from "../../ir/gemm_math.ts";
import { createPrng } from "../../ir/prng.ts";
import { Schedule } from "../../ir/schedule.ts";
import { H100 } from "../../ir/target_gpu.ts";
import { traceOf } from "../../ir/trace.ts";
import type { Workload } from "../../ir/workloads.ts";
import { KnobSpace, type Point, pointOfValues } from "../../ir/knobs.ts";
import type { Candidate } from "../strategy.ts";
import { CONV2D_GPU } from "./conv2d_gpu.ts";
import { GEMM_GPU } from "./gemm_gpu.ts";
import type { GpuTemplate } from "./gpu_template.ts";
import { MATMUL_GPU } from "./matmul_gpu.ts";
import type { TemplateSpace } from "./template.ts";

/** Largest per-thread register tile (product of the innermost spatial factors). */
export const MAX_REGISTER_TILE = 64;

const TEMPLATES: Record<string, GpuTemplate> = {
  "gemm-gpu": GEMM_GPU,
  "matmul-gpu": MATMUL_GPU,
  "conv2d-gpu": CONV2D_GPU,
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
 * import { gemmPointOf, gpuTemplateSpace } from "./registry_gpu.ts";
 * import { GEMM_DEFAULTS } from "../../ir/gemm_gpu.ts";
 * import { matmul } from "../../ir/workloads.ts";
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
