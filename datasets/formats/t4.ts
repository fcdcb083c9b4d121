/**
 * T4, the auto-tuning community's result format (the benchmark hub, Kernel
 * Tuner, KTT; schema `T4.json` of the autotuning_methodology package), read
 * as a recorded space and written from tunebook's records.
 *
 * A T4 file is `{schema_version, metadata: {timeunit}, results: [...]}`; each
 * result has a `configuration` (parameter values), `times` (`compilation`,
 * `runtimes` per iteration, `framework`, `search_algorithm`, `validation`,
 * and Kernel Tuner's `benchmark`), `invalidity` (`correct`, `compile`,
 * `runtime`, `timeout`, `correctness`, `constraints`), `correctness` and
 * `measurements` (`{name, value, unit}`; the objective's value is a number or
 * a marker such as `"RuntimeFailedConfig"`).
 *
 * **Reading** ({@link cacheOfT4}) gives the same {@link KernelTunerCache} as
 * a Kernel Tuner cache file, so that `search/replay.ts` replays it, and
 * `readKernelTunerCache` reads either kind. Times are converted to
 * milliseconds from `metadata.timeunit` (the hub spells it `miliseconds`).
 * The objective's value is the `time` measurement (mean of `runtimes` when it
 * is missing); a result whose invalidity is not `correct` is a failure:
 * `CompilationFailedConfig` for `compile`, else `RuntimeFailedConfig`; a
 * `constraints` result is skipped (not part of the space). The parameters are
 * the first configuration's keys in order, their values the distinct values
 * seen (numbers ascending), unless `metadata.tunebook` declares the space (as
 * tunebook writes it).
 *
 * **Writing** ({@link t4OfCache}) turns a Kernel Tuner cache object (as
 * `datasets/export.ts` builds from a run's records) into T4: `compilation` =
 * `compile_time`, `runtimes` = `times`, `benchmark` = `benchmark_time`,
 * `framework`, `search_algorithm` = `strategy_time`, `validation` =
 * `verification_time`, milliseconds; `metadata.tunebook` keeps the kernel,
 * device, problem size and the full parameter space so the file reads back
 * as the same space.
 *
 * @example
 * ```ts
 * import { cacheOfT4, t4OfCache } from "./t4.ts";
 * const t4 = t4OfCache({
 *   kernel_name: "vector_add", device_name: "Test GPU", problem_size: [1024],
 *   tune_params_keys: ["x"], tune_params: { x: [32, 64] }, objective: "time",
 *   cache: {
 *     "32": { x: 32, time: 2, times: [2, 2], compile_time: 100, benchmark_time: 4 },
 *     "64": { x: 64, time: "RuntimeFailedConfig", compile_time: 90 },
 *   },
 * });
 * const back = cacheOfT4(t4, "vector_add_T4.json");
 * console.log(back.cache.get("32")!.time, back.cache.get("64")!.time); // 2 RuntimeFailedConfig
 * ```
 * @module
 */
import { basename } from "node:path";
import type { ExportFormatWriter } from "./format.ts";
import { kernelTunerCacheOf } from "./kerneltuner.ts";
import type {
  KernelTunerCache,
  KernelTunerEntry,
  KernelTunerTiming,
} from "../kerneltuner_cache.ts";
import {
  describe,
  isRecord,
  isScalar,
  KernelTunerError,
  type ParamValue,
} from "../kerneltuner_json.ts";

/** The T4 schema version tunebook writes. */
export const T4_SCHEMA_VERSION = "1.0.0";

/** Milliseconds per unit of each `metadata.timeunit` spelling. */
const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({
  miliseconds: 1,
  milliseconds: 1,
  ms: 1,
  s: 1000,
  seconds: 1000,
  microseconds: 1e-3,
  us: 1e-3,
  ns: 1e-6,
  nanoseconds: 1e-6,
});

/** True when parsed JSON looks like a T4 file (a `results` list and no Kernel Tuner `cache`). */
export function isT4(data: unknown): data is Record<string, unknown> {
  return isRecord(data) && Array.isArray(data.results) && !("cache" in data);
}

function compareValues(a: ParamValue, b: ParamValue): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "number") return -1;
  if (typeof b === "number") return 1;
  return 0;
}

/**
 * Reads parsed T4 JSON as a cache (see the module doc).
 *
 * @param data the parsed JSON of a T4 file
 * @param file the file's name, for messages and the kernel and device names
 * @throws {KernelTunerError} naming the file and the field when it is malformed
 */
export function cacheOfT4(data: unknown, file: string): KernelTunerCache {
  const fail = (field: string | undefined, detail: string): never => {
    throw new KernelTunerError(detail, { file, field });
  };
  if (!isT4(data)) {
    return fail(undefined, `expected a T4 object with results, got ${describe(data)}`);
  }
  const meta = isRecord(data.metadata) ? data.metadata : {};
  const unit = meta.timeunit === undefined ? "milliseconds" : meta.timeunit;
  if (typeof unit !== "string" || !(unit in UNIT_MS)) {
    fail(
      "metadata.timeunit",
      `unknown time unit ${JSON.stringify(unit)}; known: ${Object.keys(UNIT_MS).join(", ")}`,
    );
  }
  const ms = UNIT_MS[unit as string];
  const declared = isRecord(meta.tunebook) ? meta.tunebook : undefined;
  const results = data.results as unknown[];
  let keys: string[] | undefined = Array.isArray(declared?.tune_params_keys)
    ? (declared.tune_params_keys as string[])
    : undefined;
  const rows: { values: ParamValue[]; entry: KernelTunerEntry }[] = [];
  results.forEach((r, i) => {
    const field = `results[${i}]`;
    if (!isRecord(r)) fail(field, `expected an object, got ${describe(r)}`);
    const res = r as Record<string, unknown>;
    const conf = res.configuration;
    if (!isRecord(conf)) {
      return fail(`${field}.configuration`, `expected an object, got ${describe(conf)}`);
    }
    keys ??= Object.keys(conf);
    if (keys.length === 0) fail(`${field}.configuration`, "has no parameters");
    const values = keys.map((k) => {
      const v = conf[k];
      return isScalar(v) ? v : fail(
        `${field}.configuration.${k}`,
        `expected a number, string or boolean, got ${describe(v)}`,
      );
    });
    const invalidity = res.invalidity ?? "correct";
    if (typeof invalidity !== "string") {
      fail(`${field}.invalidity`, `expected a string, got ${describe(invalidity)}`);
    }
    if (invalidity === "constraints") return;
    const times = isRecord(res.times) ? res.times : {};
    const num = (k: string): number | undefined => {
      const x = times[k];
      return typeof x === "number" && Number.isFinite(x) && x >= 0 ? x * ms : undefined;
    };
    const runtimes = Array.isArray(times.runtimes)
      ? (times.runtimes as unknown[]).filter((x): x is number =>
        typeof x === "number" && Number.isFinite(x)
      ).map((x) => x * ms)
      : undefined;
    const measurements = Array.isArray(res.measurements) ? res.measurements : [];
    const m = measurements.find((x) => isRecord(x) && x.name === "time") as
      | Record<string, unknown>
      | undefined;
    let time: number | string | undefined;
    if (invalidity !== "correct") {
      time = typeof m?.value === "string" && m.value !== ""
        ? m.value
        : invalidity === "compile"
        ? "CompilationFailedConfig"
        : "RuntimeFailedConfig";
    } else if (typeof m?.value === "number" && Number.isFinite(m.value) && m.value < 1e20) {
      time = m.value * ms;
    } else if (typeof m?.value === "string" && m.value !== "") time = m.value;
    else if (runtimes && runtimes.length > 0) {
      time = runtimes.reduce((a, b) => a + b, 0) / runtimes.length;
    } else time = "RuntimeFailedConfig";
    if (typeof time === "number" && time < 0) time = "RuntimeFailedConfig";
    const entry: KernelTunerEntry = { time };
    if (runtimes && runtimes.length > 0) entry.times = runtimes;
    const timing: KernelTunerTiming = {};
    const set = (part: keyof KernelTunerTiming, x: number | undefined) => {
      if (x !== undefined) timing[part] = x;
    };
    set("compile", num("compilation"));
    set("verification", num("validation"));
    set("benchmark", num("benchmark"));
    set("framework", num("framework"));
    set("strategy", num("search_algorithm"));
    if (Object.keys(timing).length > 0) entry.timing = timing;
    rows.push({ values, entry });
  });
  if (!keys || rows.length === 0) {
    return fail("results", "no configuration (other than constraint violations)");
  }
  const tuneParams: Record<string, ParamValue[]> = {};
  const declaredParams = isRecord(declared?.tune_params) ? declared.tune_params : undefined;
  keys.forEach((k, j) => {
    const d = declaredParams?.[k];
    if (Array.isArray(d) && d.every(isScalar)) tuneParams[k] = d as ParamValue[];
    else {
      tuneParams[k] = [...new Set(rows.map((r) => r.values[j]))].sort(compareValues);
    }
  });
  const cache = new Map<string, KernelTunerEntry>();
  for (const { values, entry } of rows) {
    values.forEach((v, j) => {
      if (!tuneParams[keys![j]].includes(v)) {
        fail("metadata.tunebook.tune_params", `${keys![j]} lacks the value ${JSON.stringify(v)}`);
      }
    });
    const key = values.map(String).join(",");
    if (cache.has(key)) fail("results", `the configuration ${key} is listed twice`);
    cache.set(key, entry);
  }
  // The hub names files <kernel>_<device>_T4.json(.gz).
  const stem = basename(file).replace(/\.json(\.gz)?$/, "").replace(/_T4$/, "");
  const us = stem.indexOf("_");
  const str = (x: unknown, fallback: string) => typeof x === "string" ? x : fallback;
  const ps = declared?.problem_size;
  return {
    file,
    deviceName: str(declared?.device_name, us > 0 ? stem.slice(us + 1) : ""),
    kernelName: str(declared?.kernel_name, us > 0 ? stem.slice(0, us) : stem),
    problemSize: (typeof ps === "number" || typeof ps === "string" || Array.isArray(ps))
      ? ps as KernelTunerCache["problemSize"]
      : 0,
    tuneParamsKeys: keys,
    tuneParams,
    objective: str(declared?.objective, "time"),
    cache,
  };
}

/** Kernel Tuner's error markers and the T4 invalidity each becomes. */
function invalidityOf(time: unknown): string {
  if (typeof time === "number") return "correct";
  if (time === "CompilationFailedConfig") return "compile";
  if (time === "InvalidConfig") return "constraints";
  return "runtime";
}

/**
 * A T4 object of a Kernel Tuner cache object (the JSON of a cache file, or
 * what `kernelTunerCacheOf` of datasets/export.ts builds from records).
 *
 * @param cache `{kernel_name, device_name, problem_size, tune_params_keys, tune_params, objective, cache}`
 * @throws {TypeError} when `cache.cache` or `cache.tune_params_keys` is missing
 */
export function t4OfCache(cache: Record<string, unknown>): Record<string, unknown> {
  const entries = cache.cache;
  const keys = cache.tune_params_keys;
  if (!isRecord(entries)) {
    throw new TypeError(`cache.cache must be an object, got ${describe(entries)}`);
  }
  if (!Array.isArray(keys)) {
    throw new TypeError(`cache.tune_params_keys must be a list, got ${describe(keys)}`);
  }
  const ms = (x: unknown) => typeof x === "number" && Number.isFinite(x) ? x : 0;
  const results = Object.values(entries).map((raw) => {
    const e = raw as Record<string, unknown>;
    const invalidity = invalidityOf(e.time);
    const runtimes = Array.isArray(e.times) ? e.times : undefined;
    return {
      timestamp: typeof e.timestamp === "string" ? e.timestamp : new Date(0).toISOString(),
      configuration: Object.fromEntries((keys as string[]).map((k) => [k, e[k]])),
      objectives: ["time"],
      times: {
        compilation: ms(e.compile_time),
        framework: ms(e.framework_time),
        search_algorithm: ms(e.strategy_time),
        validation: ms(e.verification_time),
        ...(runtimes && invalidity === "correct" ? { runtimes } : {}),
        benchmark: ms(e.benchmark_time),
      },
      invalidity,
      correctness: invalidity === "correct" ? 1 : 0,
      measurements: [{ name: "time", value: e.time, unit: "ms" }],
    };
  });
  return {
    schema_version: T4_SCHEMA_VERSION,
    metadata: {
      timeunit: "milliseconds",
      tunebook: {
        kernel_name: cache.kernel_name,
        device_name: cache.device_name,
        problem_size: cache.problem_size,
        objective: cache.objective ?? "time",
        tune_params_keys: keys,
        tune_params: cache.tune_params,
        ...(isRecord(cache.tunebook) ? cache.tunebook : {}),
      },
    },
    results,
  };
}

/**
 * The `t4` export format: a run's records as the Kernel Tuner cache would hold them
 * (`kernelTunerCacheOf`), written in T4 ({@link t4OfCache}); it reads back as a recorded space.
 *
 * @example
 * ```ts
 * import { T4_FORMAT } from "./t4.ts";
 * if (T4_FORMAT.name !== "t4") throw new Error();
 * ```
 */
export const T4_FORMAT: ExportFormatWriter = Object.freeze<ExportFormatWriter>({
  name: "t4",
  encode: (ctx) => JSON.stringify(t4OfCache(kernelTunerCacheOf(ctx))) + "\n",
});
