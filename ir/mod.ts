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
export { mean, median, quantile, type Summary as StatsSummary, summary } from "./stats.ts";
export { generateCuda } from "./codegen_cuda.ts";
export { DEFAULTS, inRange, RANGES } from "./defaults.ts";
