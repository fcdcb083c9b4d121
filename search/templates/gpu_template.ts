/**
 * What a GPU knob template is, and the pieces the loop-nest GPU templates
 * share.
 *
 * @example
 * ```ts
 * import { reductionStage } from "./gpu_template.ts";
 * import { matmul } from "../../ir/workloads.ts";
 * if (reductionStage(matmul(8, 8, 8)) !== "C") throw new Error();
 * ```
 * @module
 */
import type { MathKind } from "../../ir/gemm_math.ts";
import type { Schedule } from "../../ir/schedule.ts";
import type { Workload } from "../../ir/workloads.ts";
import type { Knob } from "../../ir/knobs.ts";

/** Steps of the `auto_unroll` knob of the loop-nest GPU templates. */
export const UNROLL_STEPS = [0, 16, 64, 512, 1500];

/** A GPU knob template. */
export interface GpuTemplate {
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
export function fp32Only(name: string, math: readonly MathKind[]): void {
  if (!math.includes("fp32")) {
    throw new RangeError(
      `Template "${name}" computes in fp32, which math ${math.join(",")} leaves out`,
    );
  }
}

/** The reduction stage of a GEMM-class workload (matmul `C`, dense `D`, conv2d `O`). */
export const reductionStage = (w: Workload) => ({ matmul: "C", dense: "D", conv2d: "O" })[w.name]!;
