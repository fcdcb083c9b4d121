/**
 * Kernel Tuner cache files: exhaustively measured search spaces of real GPU
 * kernels (`.json` or `.json.gz`), read and validated, and the six caches
 * kept in the repository's `data/kerneltuner/`.
 *
 * @example
 * ```ts
 * import { cacheStats, kernelTunerCaches, readKernelTunerCache } from "./kerneltuner_cache.ts";
 * const cache = await readKernelTunerCache(kernelTunerCaches()[5]);
 * console.log(cache.kernelName, cacheStats(cache).entries);
 * ```
 * @module
 */

import { cacheFile, cacheName, KERNELTUNER_CACHE_NAMES, KERNELTUNER_DIR } from "./cache_names.ts";
import {
  describe,
  isRecord,
  isScalar,
  KernelTunerError,
  type ParamValue,
  readKernelTunerJSON,
} from "./kerneltuner_json.ts";
import { cacheOfT4, isT4 } from "./formats/t4.ts";

/** One cached configuration. */
export interface KernelTunerEntry {
  /** Mean time in milliseconds, or an error marker such as `"RuntimeFailedConfig"`. */
  time: number | string;
  /** The individual times in milliseconds, when the file has them. */
  times?: number[];
  /**
   * What measuring the configuration cost, in milliseconds, when the file
   * records it (Kernel Tuner's `compile_time`, `verification_time`,
   * `benchmark_time`, `framework_time`, `strategy_time`; T4's `times`).
   */
  timing?: KernelTunerTiming;
}

/** The recorded parts of one configuration's tuning time, in milliseconds. */
export interface KernelTunerTiming {
  /** Compiling the kernel. */
  compile?: number;
  /** Checking its output. */
  verification?: number;
  /** Benchmarking it (all its runs). */
  benchmark?: number;
  /** The tuner's own work around it. */
  framework?: number;
  /** The search strategy's time for it, on the recording machine. */
  strategy?: number;
}

const TIMING_FIELDS: readonly [keyof KernelTunerTiming, string][] = [
  ["compile", "compile_time"],
  ["verification", "verification_time"],
  ["benchmark", "benchmark_time"],
  ["framework", "framework_time"],
  ["strategy", "strategy_time"],
];

/** A Kernel Tuner cache file, validated. */
export interface KernelTunerCache {
  /** Path the cache was read from. */
  file: string;
  /** `device_name` (empty in some files, e.g. the MI250X one). */
  deviceName: string;
  /** `kernel_name`. */
  kernelName: string;
  /** `problem_size`: a number, a string or a list of them. */
  problemSize: number | string | (number | string)[];
  /** `tune_params_keys`: parameter names, in the order of the cache keys. */
  tuneParamsKeys: string[];
  /** `tune_params`: each parameter's values. */
  tuneParams: Record<string, ParamValue[]>;
  /** `objective` (e.g. `"time"`). */
  objective: string;
  /** `cache`: key `"v1,v2,…"` (values in `tuneParamsKeys` order) -> entry. */
  cache: Map<string, KernelTunerEntry>;
}

/** Sizes of a cache, as in data/kerneltuner/README.md's table. */
export interface KernelTunerStats {
  /** Number of tuning parameters. */
  parameters: number;
  /** Size of the Cartesian product of the parameter values. */
  cartesianSize: number;
  /** Number of cached configurations. */
  entries: number;
  /** Cached configurations whose time is an error marker. */
  invalid: number;
}

export { KERNELTUNER_CACHE_NAMES, KERNELTUNER_DIR } from "./cache_names.ts";

/**
 * Paths of the six cache files of {@link KERNELTUNER_DIR} (not checked for existence).
 *
 * @param dir the folder (default {@link KERNELTUNER_DIR})
 */
export function kernelTunerCaches(dir: string = KERNELTUNER_DIR): string[] {
  return KERNELTUNER_CACHE_NAMES.map((n) => cacheFile(n, dir));
}

/**
 * Reads and validates a Kernel Tuner cache file (`.json` or `.json.gz`).
 *
 * @param path path of the file
 * @throws {KernelTunerError} naming the file and the field when the file is unreadable or malformed
 */
export async function readKernelTunerCache(path: string): Promise<KernelTunerCache> {
  const data = await readKernelTunerJSON(path);
  // A T4 file (the community's result format) reads as the same kind of space.
  if (isT4(data)) return cacheOfT4(data, path);
  return validateCache(data, path);
}

/**
 * Validates parsed cache JSON (as found in a Kernel Tuner cache file).
 *
 * @param data the parsed JSON
 * @param file name used in error messages
 * @throws {KernelTunerError} naming the file and the field
 */
export function validateCache(data: unknown, file: string): KernelTunerCache {
  const fail = (field: string | undefined, detail: string): never => {
    throw new KernelTunerError(detail, { file, field });
  };
  if (!isRecord(data)) return fail(undefined, `expected a JSON object, got ${describe(data)}`);
  const str = (field: string): string => {
    const v = data[field];
    return typeof v === "string" ? v : fail(field, `expected a string, got ${describe(v)}`);
  };
  const deviceName = str("device_name");
  const kernelName = str("kernel_name");
  const objective = str("objective");
  const ps = data.problem_size;
  const psItem = (x: unknown) =>
    (typeof x === "number" && Number.isFinite(x)) || typeof x === "string";
  if (!(psItem(ps) || (Array.isArray(ps) && ps.length > 0 && ps.every(psItem)))) {
    fail("problem_size", `expected a number, a string or a list of them, got ${describe(ps)}`);
  }
  const keys = data.tune_params_keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    return fail("tune_params_keys", `expected a non-empty list of names, got ${describe(keys)}`);
  }
  keys.forEach((k, i) => {
    if (typeof k !== "string" || k === "") {
      fail(`tune_params_keys[${i}]`, `expected a parameter name, got ${describe(k)}`);
    }
    if (keys.indexOf(k) !== i) fail(`tune_params_keys[${i}]`, `"${k}" is listed twice`);
  });
  const tp = data.tune_params;
  if (!isRecord(tp)) return fail("tune_params", `expected an object, got ${describe(tp)}`);
  const tuneParams: Record<string, ParamValue[]> = {};
  for (const k of keys as string[]) {
    const vs = tp[k];
    if (!Array.isArray(vs) || vs.length === 0) {
      fail(`tune_params.${k}`, `expected a non-empty list of values, got ${describe(vs)}`);
    }
    (vs as unknown[]).forEach((v, i) => {
      if (!isScalar(v)) {
        fail(`tune_params.${k}[${i}]`, `expected a number, string or boolean, got ${describe(v)}`);
      }
      if ((vs as unknown[]).indexOf(v) !== i) {
        fail(`tune_params.${k}[${i}]`, `value ${JSON.stringify(v)} is listed twice`);
      }
    });
    tuneParams[k] = vs as ParamValue[];
  }
  for (const k of Object.keys(tp)) {
    if (!keys.includes(k)) fail(`tune_params.${k}`, "parameter missing from tune_params_keys");
  }
  const raw = data.cache;
  if (!isRecord(raw)) return fail("cache", `expected an object, got ${describe(raw)}`);
  const cache = new Map<string, KernelTunerEntry>();
  for (const key in raw) {
    const e = raw[key];
    const field = `cache[${JSON.stringify(key)}]`;
    if (!isRecord(e)) fail(field, `expected an object, got ${describe(e)}`);
    const { time, times } = e as Record<string, unknown>;
    if (
      !((typeof time === "number" && Number.isFinite(time) && time >= 0) ||
        (typeof time === "string" && time !== ""))
    ) {
      fail(`${field}.time`, `expected milliseconds or an error marker, got ${describe(time)}`);
    }
    if (times !== undefined && !Array.isArray(times)) {
      fail(`${field}.times`, `expected a list of milliseconds, got ${describe(times)}`);
    }
    if (key.split(",").length !== keys.length) {
      fail(field, `the key has ${key.split(",").length} values, expected ${keys.length}`);
    }
    const entry: KernelTunerEntry = { time: time as number | string };
    if (times !== undefined) entry.times = times as number[];
    const timing: KernelTunerTiming = {};
    for (const [part, name] of TIMING_FIELDS) {
      const x = (e as Record<string, unknown>)[name];
      if (typeof x === "number" && Number.isFinite(x) && x >= 0) timing[part] = x;
    }
    if (Object.keys(timing).length > 0) entry.timing = timing;
    cache.set(key, entry);
  }
  return {
    file,
    deviceName,
    kernelName,
    problemSize: ps as KernelTunerCache["problemSize"],
    tuneParamsKeys: keys as string[],
    tuneParams,
    objective,
    cache,
  };
}

/**
 * Sizes of a cache: parameters, Cartesian size, entries and invalid entries.
 *
 * @param cache a cache read by {@link readKernelTunerCache}
 */
export function cacheStats(cache: KernelTunerCache): KernelTunerStats {
  let invalid = 0;
  for (const e of cache.cache.values()) if (typeof e.time === "string") invalid++;
  return {
    parameters: cache.tuneParamsKeys.length,
    cartesianSize: cache.tuneParamsKeys.reduce((n, k) => n * cache.tuneParams[k].length, 1),
    entries: cache.cache.size,
    invalid,
  };
}

/**
 * A display name for a cache's device: `device_name`, or when that is empty
 * the part of the file name after the kernel's (e.g. `MI250X`).
 *
 * @param cache a cache read by {@link readKernelTunerCache}
 */
export function deviceOf(cache: KernelTunerCache): string {
  if (cache.deviceName !== "") return cache.deviceName;
  const base = cacheName(cache.file);
  const us = base.indexOf("_");
  return us > 0 ? base.slice(us + 1) : "unknown device";
}
