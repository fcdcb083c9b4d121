/**
 * Measuring candidate kernels: a builder that compiles C kernels (with a
 * native timing harness) into cached shared objects, and a runner that checks
 * and times them in isolated worker processes.
 *
 * @module
 */

export * from "./types.ts";
export { createBuilder, DEFAULT_FLAGS } from "./builder.ts";
export type { Builder, BuilderOptions } from "./builder.ts";
export { createRunner, DEFAULT_TIMING, defaultMemoryBytes } from "./runner.ts";
export type { Runner, RunnerOptions } from "./runner.ts";
export { HARNESS_C, HARNESS_MAX_NUMBER, HARNESS_VERSION } from "./harness.ts";
export { DEFAULT_CACHE_BYTES, sweepCache } from "./kernel_cache.ts";
export type { SweepOptions, SweepReport } from "./kernel_cache.ts";
// Types that the signatures above name.
export type { MeasureBatchOptions, MeasureResult } from "./measurer.ts";
export type { NativeMeasurer, NativeMeasurerOptions } from "./native.ts";
export type { KernelSource } from "./kernel_source.ts";
export type { NativeTimings } from "./native.ts";
export { conditionsReader, withConditions } from "./conditions.ts";
export type { ConditionsReader, ConditionsSource, CpuSnapshot } from "./conditions.ts";
