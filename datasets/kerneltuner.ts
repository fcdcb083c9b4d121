/**
 * Kernel Tuner data: cache files (exhaustively measured search spaces of real
 * GPU kernels, `.json` or `.json.gz`) and "T1" search-space definitions
 * (`spaces/*.json`, tuning parameters and restriction expressions).
 *
 * This module gathers, unchanged, what four smaller ones export:
 * - `./kerneltuner_json.ts`: reading the JSON files within limits, {@link KernelTunerError};
 * - `./kerneltuner_cache.ts`: the cache reader and the six caches of `data/kerneltuner/`;
 * - `./kerneltuner_space.ts`: the space-file (T1) reader;
 * - `./restrictions.ts`: the evaluator of restrictions, Python expressions
 *   parsed and evaluated by a small evaluator (never `eval` or `Function`).
 *
 * @example
 * ```ts
 * import { compileExpression } from "./kerneltuner.ts";
 * const r = compileExpression("MWG % (MDIMC * VWM) == 0");
 * if (!r.evaluate({ MWG: 64, MDIMC: 8, VWM: 2 })) throw new Error();
 * ```
 * @module
 */

export { KernelTunerError, type ParamValue, readKernelTunerJSON } from "./kerneltuner_json.ts";
export {
  cacheStats,
  deviceOf,
  KERNELTUNER_CACHE_NAMES,
  KERNELTUNER_DIR,
  type KernelTunerCache,
  kernelTunerCaches,
  type KernelTunerEntry,
  type KernelTunerStats,
  type KernelTunerTiming,
  readKernelTunerCache,
  validateCache,
} from "./kerneltuner_cache.ts";
export {
  type KernelTunerSpace,
  readSpaceFile,
  type SpaceCondition,
  type SpaceParameter,
} from "./kerneltuner_space.ts";
export {
  type CompiledExpression,
  compileExpression,
  compileRestrictions,
  ExpressionError,
  type ExprValue,
  isTruthy,
} from "./restrictions.ts";
