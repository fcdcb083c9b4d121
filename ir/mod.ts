/**
 * Tensor programs: tensor expressions and the workload library, schedules
 * and their traces, lowering to loop nests, C/CUDA code generation, the
 * reference evaluator, the seeded PRNG, statistics and the defaults object.
 *
 * @example
 * ```ts
 * import { createWorkload, DEFAULTS } from "./mod.ts";
 * const w = createWorkload("matmul", [8, 8, 8]);
 * if (w.flops !== 2 * 8 * 8 * 8) throw new Error();
 * console.log(w.name, w.shape, DEFAULTS.tune.trials);
 * ```
 * @module
 */
export * from "./te.ts";
export * from "./workloads.ts";
export { Schedule } from "./schedule.ts";
export type { Inst, RV, ScheduleOptions } from "./schedule.ts";
export { ScheduleError, TraceError } from "./errors.ts";
export { createPrng, type Prng } from "./prng.ts";
export * from "./trace.ts";
export { lower } from "./lower.ts";
export { generateC } from "./codegen_c.ts";
export { evaluate } from "./evaluate.ts";
export { mean, median, quantile, spread, type Summary as StatsSummary, summary } from "./stats.ts";
export type { MeasureConditions } from "./conditions.ts";
export { generateCuda } from "./codegen_cuda.ts";
export { DEFAULTS, inRange, RANGES } from "./defaults.ts";
// Types that the signatures above name.
export type { Arg } from "./schedule.ts";
export type { Loop, Stage } from "./stage.ts";
export type { Kernel, ThreadAxis } from "./ast.ts";
export type { CodegenOptions } from "./codegen_c.ts";
export type { CudaOptions } from "./codegen_cuda.ts";
export type { CompareDefaults, TuneDefaults } from "./defaults.ts";
export type { MathKind } from "./gemm_math.ts";
export type { RegisterFile } from "./target_cpu.ts";
export type { ScheduledStages } from "./bounds.ts";
export type { VectorLanes } from "./codegen_c.ts";
export type { TimingDefaults } from "./defaults.ts";
export type { Stmt } from "./ast.ts";
export { THREAD_AXES } from "./ast.ts";
export { MMA_KINDS } from "./gemm_gpu.ts";
export type { Annotation, Attach, LayoutDim, Relation } from "./stage.ts";
export type { AExpr, ForKind } from "./ast.ts";
