/**
 * Whole networks: the built-in networks, their tuning tasks, random weights
 * and end-to-end measurement.
 *
 * @example
 * ```ts
 * import { BUILTIN_NETWORKS } from "./mod.ts";
 * console.log(Object.keys(BUILTIN_NETWORKS));
 * ```
 * @module
 */
export { BUILTIN_NETWORKS, builtinNetwork } from "./builtin.ts";
export { extractTasks, type Task, taskKey } from "./tasks.ts";
export { type EndToEnd, measureEndToEnd } from "./end_to_end.ts";
export { randomWeights } from "./weights.ts";
// Types that the signatures above name.
export type { Network } from "./network.ts";
export type { BuiltinOptions } from "./builtin.ts";
export type { EndToEndOptions } from "./end_to_end.ts";
export type { StepTime } from "./executor.ts";
export type { Weights } from "./weights.ts";
export type { Layer } from "./network.ts";
export { type Op, OPS } from "./network.ts";
