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
