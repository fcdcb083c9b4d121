/**
 * Replays a Kernel Tuner cache (an exhaustively measured search space) as a
 * knob space: a strategy proposes a point, the replay answers with the
 * recorded time, as in Schoonhoven et al.'s auto-tuning benchmark. Lookups
 * are an array access by flat index.
 *
 * A point of the Cartesian product absent from the cache (excluded by the
 * kernel's restrictions when the space was measured) is an
 * `"instantiation_error"`: invalid, and by default it still costs one
 * evaluation. With `absent: "restricted"` the knob space's `isValid` also
 * rejects it, so strategies that check validity can skip it.
 *
 * A recorded time must be positive: an entry with `time: 0` (finite and
 * non-negative, so the cache reads) replays as a `"runtime_error"`, an invalid
 * configuration, and never becomes the optimum (it would make every fraction
 * of optimum 0). {@link ReplaySpace.nonPositiveTimes} counts such entries.
 *
 * @example
 * ```ts
 * import { replaySpaceFromFile } from "./replay.ts";
 * import { createPrng } from "../ir/prng.ts";
 * const r = await replaySpaceFromFile("pnpoly_RTX_3090");
 * const p = r.space.random(createPrng(1));
 * console.log(r.evaluate(p), r.optimum);
 * ```
 * @module
 */
import {
  compileRestrictions,
  deviceOf,
  type KernelTunerCache,
  type KernelTunerEntry,
  KernelTunerError,
  type ParamValue,
  readKernelTunerCache,
} from "../datasets/kerneltuner.ts";
import { ALL_CACHE_NAMES, RECORDED_DIR, resolveCachePath } from "../datasets/cache_names.ts";
import { checkObject, described } from "../ir/check.ts";
import { limitMessage, LIMITS } from "../ir/limits.ts";
import type { ErrorKind } from "../ir/error_kind.ts";
import { KnobSpace, type Point } from "../ir/knobs.ts";
import type { Candidate, CandidateOf, Observation } from "./strategy.ts";
import { expectedRandomFraction } from "./score.ts";

export type { Candidate, CandidateOf, ErrorKind, KnobSpace, Observation, Point };

/** Options of {@link replaySpace}. */
export interface ReplayOptions {
  /**
   * What a point absent from the cache is: `"invalid"` (default: in the
   * space, evaluates to an instantiation error) or `"restricted"` (also
   * rejected by the knob space's `isValid`).
   */
  absent?: "invalid" | "restricted";
  /**
   * Restriction expressions over the parameter names (Kernel Tuner syntax,
   * e.g. from a space file): points that violate one are rejected by
   * `isValid` and evaluate to an instantiation error.
   */
  restrictions?: string[];
}

/** What replaying one point gave. */
export interface ReplayResult {
  /** `"none"` when the cache has a time for the point. */
  errorKind: ErrorKind;
  /** Seconds per call (the cache's mean time) when `errorKind` is `"none"`. */
  seconds?: number;
  /** The cache's error marker (e.g. `"RuntimeFailedConfig"`), or why the point is invalid. */
  error?: string;
}

/** A Kernel Tuner cache replayed as a knob space. */
export interface ReplaySpace {
  /** Kernel and device, e.g. `"Xgemm on NVIDIA GeForce RTX 3090"`. */
  name: string;
  /** The cache replayed. */
  cache: KernelTunerCache;
  /** Knobs: the cache's `tune_params` in `tune_params_keys` order (kind `"other"`). */
  space: KnobSpace;
  /** Replays a point (a RangeError when it is not a point of the space). */
  evaluate(point: Point): ReplayResult;
  /** `evaluate` with the configuration's recorded compile and benchmark seconds, for the records. */
  recorded(point: Point): ReplayResult & { buildSeconds?: number; runSeconds?: number };
  /** Replays the point of a flat index. */
  evaluateIndex(index: number): ReplayResult;
  /**
   * The cache's entry of a flat index (its recorded times and timing), or
   * undefined when the point is absent or violates a restriction.
   */
  entryOf(index: number): KernelTunerEntry | undefined;
  /** The flat index of a point (a RangeError when it is not a point of the space). */
  indexOf(point: Point): number;
  /** Replays candidates (each needs `knobs`) into observations. */
  measure(candidates: Candidate[]): Observation[];
  /** Best (lowest) seconds over the whole cache. */
  optimum: number;
  /** A point with the best time. */
  optimumPoint: Point;
  /** Points that evaluate to a time (allowed by the space and measured without error). */
  validCount: number;
  /** Points the knob space's `isValid` accepts (its `size` when nothing is restricted). */
  allowedCount: number;
  /** Entries whose time is 0 ms, replayed as invalid (`"runtime_error"`). */
  nonPositiveTimes: number;
  /** Turns a point into a candidate: `{ knobs }`. */
  candidateOf: CandidateOf;
}

/** Python's `str()` of a parameter value, and the other spellings a cache key may use. */
function spellings(v: ParamValue): string[] {
  if (typeof v === "boolean") return v ? ["True", "true"] : ["False", "false"];
  if (typeof v === "number" && Number.isInteger(v)) return [String(v), `${v}.0`];
  return [String(v)];
}

function resultOf(time: number | string): ReplayResult {
  if (typeof time === "number" && time > 0) {
    return Object.freeze({ errorKind: "none", seconds: time / 1000 });
  }
  if (typeof time === "number") {
    return Object.freeze({
      errorKind: "runtime_error",
      error: `time ${time} ms is not positive: treated as an invalid configuration`,
    });
  }
  return Object.freeze({
    errorKind: time === "CompilationFailedConfig" ? "compile_host" : "runtime_error",
    error: time,
  });
}

const ABSENT: ReplayResult = Object.freeze({
  errorKind: "instantiation_error",
  error: "absent from the cache (excluded by the space's restrictions)",
});
const RESTRICTED: ReplayResult = Object.freeze({
  errorKind: "instantiation_error",
  error: "violates a restriction",
});

/**
 * Replays a cache as a knob space.
 *
 * @param cache a cache read by {@link readKernelTunerCache}
 * @param options absent points and extra restrictions
 * @throws {KernelTunerError} when a cache key names a value not in `tune_params`
 * @throws {ExpressionError} when a restriction cannot be parsed or names an unknown parameter
 */
export function replaySpace(cache: KernelTunerCache, options: ReplayOptions = {}): ReplaySpace {
  if (
    typeof cache !== "object" || cache === null || !Array.isArray(cache.tuneParamsKeys) ||
    !(cache.cache instanceof Map)
  ) {
    throw new TypeError(
      `cache must be a Kernel Tuner cache (readKernelTunerCache); for a name or path use replaySpaceFromFile, got ${
        described(cache)
      }`,
    );
  }
  checkObject(options, "options");
  const absent = options.absent ?? "invalid";
  if (absent !== "invalid" && absent !== "restricted") {
    throw new RangeError(`absent must be "invalid" or "restricted", got "${absent}"`);
  }
  const keys = cache.tuneParamsKeys;
  const radix = keys.map((k) => cache.tuneParams[k].length);
  const strides: number[] = [];
  let size = 1;
  for (const r of radix) {
    strides.push(size);
    size *= r;
  }
  if (!Number.isSafeInteger(size) || size > LIMITS.replayPoints.value) {
    throw new KernelTunerError(
      limitMessage(`the space of ${size} points is too large to replay`, LIMITS.replayPoints),
      { file: cache.file },
    );
  }
  // Map each key token to its option index.
  const lookups = keys.map((k) => {
    const m = new Map<string, number>();
    const byNumber = new Map<number, number>();
    cache.tuneParams[k].forEach((v, i) => {
      for (const s of spellings(v)) if (!m.has(s)) m.set(s, i);
      if (typeof v === "number") byNumber.set(v, i);
    });
    return (token: string): number | undefined => {
      const i = m.get(token);
      if (i !== undefined) return i;
      const n = token.trim() === "" ? NaN : Number(token);
      return Number.isNaN(n) ? undefined : byNumber.get(n);
    };
  });

  const table = new Int32Array(size).fill(-1);
  const results: ReplayResult[] = [];
  const entries: KernelTunerEntry[] = [];
  let optimum = Infinity, optimumIndex = -1, nonPositiveTimes = 0;
  for (const [key, entry] of cache.cache) {
    const tokens = key.split(",");
    let idx = 0;
    tokens.forEach((t, i) => {
      const o = lookups[i](t);
      if (o === undefined) {
        throw new KernelTunerError(`value "${t}" of ${keys[i]} is not in tune_params.${keys[i]}`, {
          file: cache.file,
          field: `cache[${JSON.stringify(key)}]`,
        });
      }
      idx += o * strides[i];
    });
    if (table[idx] >= 0) {
      throw new KernelTunerError("the same configuration is cached twice", {
        file: cache.file,
        field: `cache[${JSON.stringify(key)}]`,
      });
    }
    table[idx] = results.length;
    results.push(resultOf(entry.time));
    entries.push(entry);
    if (typeof entry.time === "number" && entry.time <= 0) nonPositiveTimes++;
    if (typeof entry.time === "number" && entry.time > 0 && entry.time < optimum) {
      optimum = entry.time;
      optimumIndex = idx;
    }
  }
  if (optimumIndex < 0) {
    throw new KernelTunerError("no configuration of the cache has a positive time", {
      file: cache.file,
      field: "cache",
    });
  }

  const pointOf = (index: number): Point => {
    const p: Point = [];
    for (const r of radix) {
      p.push(index % r);
      index = Math.floor(index / r);
    }
    return p;
  };

  // allowed[i] === 0: rejected by isValid (absent in "restricted" mode, or violating a restriction).
  let allowed: Uint8Array | undefined;
  let violates: Uint8Array | undefined;
  if (absent === "restricted" || (options.restrictions?.length ?? 0) > 0) {
    allowed = new Uint8Array(size).fill(1);
    if (absent === "restricted") {
      for (let i = 0; i < size; i++) if (table[i] < 0) allowed[i] = 0;
    }
    if (options.restrictions && options.restrictions.length > 0) {
      const ok = compileRestrictions(options.restrictions, keys);
      violates = new Uint8Array(size);
      const values: Record<string, unknown> = {};
      for (let i = 0; i < size; i++) {
        let rest = i;
        for (let j = 0; j < keys.length; j++) {
          values[keys[j]] = cache.tuneParams[keys[j]][rest % radix[j]];
          rest = Math.floor(rest / radix[j]);
        }
        if (!ok(values)) {
          violates[i] = 1;
          allowed[i] = 0;
        }
      }
    }
  }

  const indexOf = (point: Point): number => {
    if (!Array.isArray(point) || point.length !== radix.length) {
      throw new RangeError(
        `Point ${JSON.stringify(point)} is not in this ${radix.length}-knob space`,
      );
    }
    let idx = 0;
    for (let i = 0; i < radix.length; i++) {
      const v = point[i];
      if (!Number.isInteger(v) || v < 0 || v >= radix[i]) {
        throw new RangeError(
          `Point ${JSON.stringify(point)} is not in this ${radix.length}-knob space`,
        );
      }
      idx += v * strides[i];
    }
    return idx;
  };

  const evaluateIndex = (index: number): ReplayResult => {
    if (!Number.isInteger(index) || index < 0 || index >= size) {
      throw new RangeError(`Index ${index} is outside the space of ${size} points`);
    }
    if (violates && violates[index]) return RESTRICTED;
    const e = table[index];
    return e < 0 ? ABSENT : results[e];
  };
  const evaluate = (point: Point): ReplayResult => evaluateIndex(indexOf(point));
  const entryOf = (index: number): KernelTunerEntry | undefined => {
    if (!Number.isInteger(index) || index < 0 || index >= size) {
      throw new RangeError(`Index ${index} is outside the space of ${size} points`);
    }
    return (violates && violates[index]) || table[index] < 0 ? undefined : entries[table[index]];
  };
  /** The result with the entry's recorded compile and benchmark seconds, for the records. */
  const recorded = (point: Point) => {
    const index = indexOf(point);
    const t = entryOf(index)?.timing;
    if (!t) return evaluateIndex(index);
    return {
      ...evaluateIndex(index),
      buildSeconds: (t.compile ?? 0) / 1000,
      runSeconds: ((t.benchmark ?? 0) + (t.verification ?? 0)) / 1000,
    };
  };

  let validCount = 0, allowedCount = 0;
  for (let i = 0; i < size; i++) {
    if (allowed && !allowed[i]) continue;
    allowedCount++;
    if (evaluateIndex(i).errorKind === "none") validCount++;
  }

  const space = new KnobSpace(
    keys.map((k) => ({ name: k, kind: "other" as const, options: cache.tuneParams[k] })),
    allowed ? { isValid: (_values, point) => allowed[indexOf(point)] === 1 } : {},
  );
  const candidateOf: CandidateOf = (knobs) => ({ knobs: [...knobs] });

  const name = `${cache.kernelName} on ${deviceOf(cache)}`;
  return {
    name,
    cache,
    space,
    evaluate,
    recorded,
    evaluateIndex,
    entryOf,
    indexOf,
    measure: (candidates) =>
      candidates.map((c) => {
        if (!c.knobs) throw new RangeError("A replayed candidate needs knobs");
        const r = evaluate(c.knobs);
        return r.seconds === undefined
          ? { candidate: c, errorKind: r.errorKind }
          : { candidate: c, errorKind: r.errorKind, seconds: r.seconds };
      }),
    optimum: optimum / 1000,
    optimumPoint: pointOf(optimumIndex),
    validCount,
    allowedCount,
    nonPositiveTimes,
    candidateOf,
  };
}

/**
 * `--space all` of `compare` and the benches: every Kernel Tuner cache of
 * `data/kerneltuner/` and the recorded CPU layers of {@link RECORDED_DIR}
 * (datasets/cache_names.ts `ALL_CACHE_NAMES`).
 *
 * @example
 * ```ts
 * import { ALL_SPACES } from "./replay.ts";
 * if (!ALL_SPACES.includes("resnet18_conv4_cpu")) throw new Error();
 * ```
 */
export const ALL_SPACES: readonly string[] = ALL_CACHE_NAMES;

/** Where a cache name or path points (the one rule: datasets/cache_names.ts). */
export { RECORDED_DIR, resolveCachePath };

/**
 * The exact expected fraction of the optimum of random search on a replayed
 * space at each budget `lo..hi` (`expectedRandomFraction` over the times of
 * its valid configurations, drawing among its allowed ones).
 *
 * @example
 * ```ts
 * import { expectedRandomCurve, replaySpaceFromFile } from "./replay.ts";
 * const r = await replaySpaceFromFile("pnpoly_RTX_3090");
 * const curve = expectedRandomCurve(r, 1, 50);
 * if (curve.length !== 50 || !(curve[49] > curve[0])) throw new Error();
 * ```
 */
export function expectedRandomCurve(replay: ReplaySpace, lo: number, hi: number): number[] {
  const times: number[] = [];
  for (let i = 0; i < replay.space.size; i++) {
    const s = replay.evaluateIndex(i).seconds;
    if (s !== undefined && replay.space.isValid(replay.space.point(i))) times.push(s);
  }
  return Array.from(
    { length: hi - lo + 1 },
    (_, k) => expectedRandomFraction(times, replay.allowedCount, lo + k),
  );
}

/**
 * Reads a cache and replays it.
 *
 * @param pathOrName a path to a `.json`/`.json.gz` cache, or a Kernel Tuner cache's name such as `"gemm_RTX_3090"`
 * @param options absent points and extra restrictions (see {@link replaySpace})
 * @throws {KernelTunerError} when the file is missing or malformed
 */
export async function replaySpaceFromFile(
  pathOrName: string,
  options: ReplayOptions = {},
): Promise<ReplaySpace> {
  return replaySpace(await readKernelTunerCache(resolveCachePath(pathOrName)), options);
}
