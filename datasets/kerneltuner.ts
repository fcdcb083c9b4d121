/**
 * Kernel Tuner data: cache files (exhaustively measured search spaces of real
 * GPU kernels, `.json` or `.json.gz`) and "T1" search-space definitions
 * (`spaces/*.json`, tuning parameters and restriction expressions).
 *
 * Restrictions are Python expressions in Kernel Tuner. They are evaluated
 * here by a small parser and evaluator (never `eval` or `Function`) that
 * knows numbers, strings, lists, parameter names, `+ - * / // % **`,
 * comparisons (chained, as in Python, and `in` / `not in`), `and`, `or`,
 * `not`, parentheses, list literals and comprehensions, and the functions
 * `range list len min max abs int float sum`. Anything else is an
 * {@link ExpressionError}.
 *
 * @example
 * ```ts
 * import { compileExpression } from "./kerneltuner.ts";
 * const r = compileExpression("MWG % (MDIMC * VWM) == 0");
 * if (!r.evaluate({ MWG: 64, MDIMC: 8, VWM: 2 })) throw new Error();
 * ```
 * @module
 */

import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { LimitError, LIMITS } from "../ir/limits.ts";
import { readBounded } from "./read_bounded.ts";

/** Error raised for a malformed Kernel Tuner file or expression; names the file and field. */
export class KernelTunerError extends Error {
  /** File the error is about, when known. */
  readonly file?: string;
  /** Field of the file the error is about (e.g. `tune_params.block_size_x`), when known. */
  readonly field?: string;

  /**
   * Creates an error; the message is `file: field "f": detail`.
   *
   * @param detail what is wrong
   * @param where the file and field concerned, and a cause
   */
  constructor(detail: string, where: { file?: string; field?: string; cause?: unknown } = {}) {
    const parts = [where.file, where.field === undefined ? undefined : `field "${where.field}"`]
      .filter((p) => p !== undefined && p !== "");
    super([...parts, detail].join(": "), { cause: where.cause });
    this.name = "KernelTunerError";
    this.file = where.file;
    this.field = where.field;
  }
}

/** Error raised when an expression cannot be parsed or evaluated. */
export class ExpressionError extends KernelTunerError {
  /** The expression's source text. */
  readonly expression: string;
  /** 1-based column of the problem, when known. */
  readonly column?: number;

  /**
   * Creates an error about `expression`.
   *
   * @param expression the source text
   * @param detail what is wrong
   * @param column 1-based column of the problem
   */
  constructor(expression: string, detail: string, column?: number) {
    super(
      `expression ${JSON.stringify(expression)}: ${detail}${
        column === undefined ? "" : ` at column ${column}`
      }`,
    );
    this.name = "ExpressionError";
    this.expression = expression;
    this.column = column;
  }
}

// ---------------------------------------------------------------------------
// Cache files

/** A value of a tuning parameter (Kernel Tuner parameters are JSON scalars). */
export type ParamValue = number | string | boolean;

/** One cached configuration. */
export interface KernelTunerEntry {
  /** Mean time in milliseconds, or an error marker such as `"RuntimeFailedConfig"`. */
  time: number | string;
  /** The individual times in milliseconds, when the file has them. */
  times?: number[];
}

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

/**
 * The repository's folder of Kernel Tuner data (`data/kerneltuner/`: six
 * caches of real GPUs and their space files, MIT licence), as a path ending
 * in a separator.
 */
export const KERNELTUNER_DIR: string = fileURLToPath(
  new URL("../data/kerneltuner/", import.meta.url),
);

/** Names (without `.json.gz`) of the six cache files of {@link KERNELTUNER_DIR}. */
export const KERNELTUNER_CACHE_NAMES: readonly string[] = [
  "convolution_A100",
  "convolution_A4000",
  "convolution_MI250X",
  "dedispersion_A100",
  "gemm_RTX_3090",
  "pnpoly_RTX_3090",
];

/**
 * Paths of the six cache files of {@link KERNELTUNER_DIR} (not checked for existence).
 *
 * @param dir the folder (default {@link KERNELTUNER_DIR})
 */
export function kernelTunerCaches(dir: string = KERNELTUNER_DIR): string[] {
  return KERNELTUNER_CACHE_NAMES.map((n) => join(dir, `${n}.json.gz`));
}

/**
 * Reads a file as text, gunzipping it when it starts with the gzip magic
 * bytes, within the limits "cache file size" and "inflated size".
 */
async function readText(path: string): Promise<string> {
  let read: { text: string; gzip: boolean };
  try {
    read = await readBounded(path, {
      maxBytes: LIMITS.cacheFileBytes,
      maxInflatedBytes: LIMITS.inflatedBytes,
    });
  } catch (e) {
    const detail = e instanceof LimitError
      ? e.message
      : e instanceof TypeError
      ? `corrupt gzip data (${e.message})`
      : `cannot read the file (${(e as Error).message})`;
    throw new KernelTunerError(detail, { file: path, cause: e });
  }
  if (!read.gzip && path.endsWith(".gz")) {
    throw new KernelTunerError("the file ends in .gz but is not gzip-compressed", { file: path });
  }
  return read.text;
}

/**
 * Reads a Kernel Tuner JSON file (`.json` or `.json.gz`) within the limits
 * "cache file size" and "inflated size" of `ir/limits.ts`, unvalidated.
 *
 * @param path path of the file
 * @throws {KernelTunerError} naming the file: unreadable, too large, corrupt gzip or not JSON
 * @example
 * ```ts
 * import { kernelTunerCaches, readKernelTunerJSON } from "./kerneltuner.ts";
 * const raw = await readKernelTunerJSON(kernelTunerCaches()[5]) as { kernel_name: string };
 * console.log(raw.kernel_name);
 * ```
 */
export function readKernelTunerJSON(path: string): Promise<unknown> {
  return readJSON(path);
}

async function readJSON(path: string): Promise<unknown> {
  const text = await readText(path);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new KernelTunerError(`not valid JSON (${(e as Error).message})`, {
      file: path,
      cause: e,
    });
  }
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function isScalar(x: unknown): x is ParamValue {
  return (typeof x === "number" && Number.isFinite(x)) || typeof x === "string" ||
    typeof x === "boolean";
}

function describe(x: unknown): string {
  if (x === undefined) return "nothing (the field is missing)";
  if (x === null) return "null";
  if (Array.isArray(x)) return "a list";
  if (typeof x === "object") return "an object";
  const s = JSON.stringify(x) ?? String(x);
  return `${typeof x} ${s.length > 40 ? s.slice(0, 40) + "…" : s}`;
}

/**
 * Reads and validates a Kernel Tuner cache file (`.json` or `.json.gz`).
 *
 * @param path path of the file
 * @throws {KernelTunerError} naming the file and the field when the file is unreadable or malformed
 */
export async function readKernelTunerCache(path: string): Promise<KernelTunerCache> {
  const data = await readJSON(path);
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
  const base = basename(cache.file).replace(/\.json(\.gz)?$/, "");
  const us = base.indexOf("_");
  return us > 0 ? base.slice(us + 1) : "unknown device";
}

// ---------------------------------------------------------------------------
// Search-space files (Kernel Tuner "T1" format)

/** One tuning parameter of a space file. */
export interface SpaceParameter {
  /** `Name`. */
  name: string;
  /** `Type` (e.g. `"int"`). */
  type: string;
  /** `Values`, evaluated (a list literal, a range, a comprehension…). */
  values: ParamValue[];
  /** `Default`, as written. */
  default?: unknown;
}

/** One restriction of a space file (`ConfigurationSpace.Conditions[i]`). */
export interface SpaceCondition {
  /** `Expression`, e.g. `"MWG % (MDIMC * VWM) == 0"`. */
  expression: string;
  /** `Parameters` it names, as written. */
  parameters: string[];
}

/** A Kernel Tuner T1 search-space definition. */
export interface KernelTunerSpace {
  /** Path the space was read from. */
  file: string;
  /** `General.BenchmarkName`. */
  name: string;
  /** `KernelSpecification.KernelName`, when present. */
  kernelName?: string;
  /** `ConfigurationSpace.TuningParameters`, values evaluated. */
  parameters: SpaceParameter[];
  /** `ConfigurationSpace.Conditions`. */
  conditions: SpaceCondition[];
  /** The conditions' expressions. */
  restrictions: string[];
  /** Size of the Cartesian product of the parameter values. */
  cartesianSize: number;
  /** True when values (by parameter name) satisfy every restriction. */
  isValid(values: Record<string, unknown>): boolean;
}

/**
 * Reads a Kernel Tuner T1 search-space file (`spaces/*.json`): its tuning
 * parameters (with `Values` evaluated) and its restrictions (compiled).
 *
 * @param path path of the file
 * @throws {KernelTunerError} naming the file and the field
 */
export async function readSpaceFile(path: string): Promise<KernelTunerSpace> {
  const data = await readJSON(path);
  const fail = (field: string | undefined, detail: string, cause?: unknown): never => {
    throw new KernelTunerError(detail, { file: path, field, cause });
  };
  if (!isRecord(data)) return fail(undefined, `expected a JSON object, got ${describe(data)}`);
  const general = isRecord(data.General) ? data.General : {};
  const cs = data.ConfigurationSpace;
  if (!isRecord(cs)) {
    return fail("ConfigurationSpace", `expected an object, got ${describe(cs)}`);
  }
  const tps = cs.TuningParameters;
  if (!Array.isArray(tps) || tps.length === 0) {
    return fail(
      "ConfigurationSpace.TuningParameters",
      `expected a non-empty list, got ${describe(tps)}`,
    );
  }
  const parameters: SpaceParameter[] = tps.map((p, i) => {
    const f = `ConfigurationSpace.TuningParameters[${i}]`;
    if (!isRecord(p)) return fail(f, `expected an object, got ${describe(p)}`);
    if (typeof p.Name !== "string" || p.Name === "") {
      return fail(`${f}.Name`, `expected a name, got ${describe(p.Name)}`);
    }
    const type = typeof p.Type === "string" ? p.Type : "";
    let values: unknown = p.Values;
    if (typeof values === "string") {
      try {
        values = compileExpression(values).evaluate({});
      } catch (e) {
        return fail(`${f}.Values`, (e as Error).message, e);
      }
    }
    if (!Array.isArray(values) || values.length === 0) {
      return fail(`${f}.Values`, `expected a non-empty list, got ${describe(values)}`);
    }
    values.forEach((v, j) => {
      if (!isScalar(v)) fail(`${f}.Values`, `value ${j} is ${describe(v)}, not a scalar`);
      if (type === "int" && !Number.isInteger(v)) {
        fail(`${f}.Values`, `value ${j} (${JSON.stringify(v)}) is not an int`);
      }
    });
    const out: SpaceParameter = { name: p.Name, type, values: values as ParamValue[] };
    if ("Default" in p) out.default = p.Default;
    return out;
  });
  const names = parameters.map((p) => p.name);
  names.forEach((n, i) => {
    if (names.indexOf(n) !== i) {
      fail(`ConfigurationSpace.TuningParameters[${i}].Name`, `"${n}" is defined twice`);
    }
  });
  const conds = cs.Conditions ?? [];
  if (!Array.isArray(conds)) {
    return fail("ConfigurationSpace.Conditions", `expected a list, got ${describe(conds)}`);
  }
  const compiled: CompiledExpression[] = [];
  const conditions: SpaceCondition[] = conds.map((c, i) => {
    const f = `ConfigurationSpace.Conditions[${i}]`;
    if (!isRecord(c)) return fail(f, `expected an object, got ${describe(c)}`);
    if (typeof c.Expression !== "string") {
      return fail(`${f}.Expression`, `expected a string, got ${describe(c.Expression)}`);
    }
    try {
      compiled.push(compileExpression(c.Expression, names));
    } catch (e) {
      return fail(`${f}.Expression`, (e as Error).message, e);
    }
    const ps = c.Parameters ?? [];
    if (!Array.isArray(ps) || !ps.every((x) => typeof x === "string" && names.includes(x))) {
      return fail(`${f}.Parameters`, "expected a list of tuning parameter names");
    }
    return { expression: c.Expression, parameters: ps as string[] };
  });
  const ks = isRecord(data.KernelSpecification) ? data.KernelSpecification : {};
  return {
    file: path,
    name: typeof general.BenchmarkName === "string"
      ? general.BenchmarkName
      : basename(path).replace(/\.json$/, ""),
    kernelName: typeof ks.KernelName === "string" ? ks.KernelName : undefined,
    parameters,
    conditions,
    restrictions: conditions.map((c) => c.expression),
    cartesianSize: parameters.reduce((n, p) => n * p.values.length, 1),
    isValid: (values) => compiled.every((c) => truthy(c.evaluate(values))),
  };
}

// ---------------------------------------------------------------------------
// Expressions

/** A value an expression computes: a number, boolean, string or list. */
export type ExprValue = number | boolean | string | ExprValue[];

/** An expression, parsed once, evaluated many times. */
export interface CompiledExpression {
  /** The source text. */
  readonly source: string;
  /** The free names it reads (parameters), in order of first use. */
  readonly names: readonly string[];
  /**
   * Evaluates the expression with names bound to `env`'s values.
   *
   * @throws {ExpressionError} on an unbound name, a type error or a division by zero
   */
  evaluate(env: Record<string, unknown>): ExprValue;
}

type Tok = {
  kind: "num" | "str" | "name" | "kw" | "op" | "end";
  text: string;
  value?: number | string;
  col: number;
};

const KEYWORDS = new Set(["and", "or", "not", "in", "for", "if", "True", "False"]);
const UNSUPPORTED_KEYWORDS = new Set([
  "is",
  "else",
  "lambda",
  "None",
  "import",
  "from",
  "def",
  "class",
  "return",
  "yield",
  "await",
  "async",
  "while",
  "with",
  "as",
  "del",
  "global",
  "nonlocal",
  "assert",
  "pass",
  "raise",
  "try",
  "except",
  "finally",
  "break",
  "continue",
  "elif",
]);
const OPERATORS = ["**", "//", "<=", ">=", "==", "!=", "<", ">", "+", "-", "*", "/", "%"]
  .concat(["(", ")", "[", "]", ","]);

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const err = (detail: string, at: number): never => {
    throw new ExpressionError(src, detail, at + 1);
  };
  while (i < src.length) {
    const c = src[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    const num = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i));
    if (num) {
      if (/^[A-Za-z_]/.test(src.slice(i + num[0].length))) {
        err(`unsupported number literal "${src.slice(i).match(/^\w+/)![0]}"`, i);
      }
      out.push({ kind: "num", text: num[0], value: Number(num[0]), col: i });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (id) {
      const w = id[0];
      if (UNSUPPORTED_KEYWORDS.has(w)) {
        const why = w === "else" ? " (conditional expressions are not supported)" : "";
        err(`unsupported Python keyword "${w}"${why}`, i);
      }
      out.push({ kind: KEYWORDS.has(w) ? "kw" : "name", text: w, col: i });
      i += w.length;
      continue;
    }
    if (c === '"' || c === "'") {
      let s = "";
      let j = i + 1;
      for (;;) {
        if (j >= src.length || src[j] === "\n") err("unterminated string", i);
        const d = src[j];
        if (d === c) break;
        if (d === "\\") {
          const e = src[j + 1];
          const map: Record<string, string> = { n: "\n", t: "\t", "\\": "\\", "'": "'", '"': '"' };
          if (!(e in map)) err(`unsupported escape "\\${e ?? ""}"`, j);
          s += map[e];
          j += 2;
        } else {
          s += d;
          j++;
        }
      }
      out.push({ kind: "str", text: src.slice(i, j + 1), value: s, col: i });
      i = j + 1;
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (!op) {
      const two = src.slice(i, i + 2);
      const hint: Record<string, string> = {
        "&&": "use and",
        "||": "use or",
        "!": "use not",
      };
      const h = hint[two] ?? hint[c];
      err(`unsupported character "${c}"${h ? ` (${h})` : ""}`, i);
    }
    out.push({ kind: "op", text: op!, col: i });
    i += op!.length;
  }
  out.push({ kind: "end", text: "end of expression", col: src.length });
  return out;
}

type Fn = (env: Record<string, unknown>) => ExprValue;

/** Python truthiness. */
function truthy(v: ExprValue): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "string") return v.length > 0;
  return v !== 0 && v !== false;
}

function typeName(v: ExprValue): string {
  if (Array.isArray(v)) return "list";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  return "str";
}

function equal(a: ExprValue, b: ExprValue): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((x, i) => equal(x, b[i]));
  }
  if (typeof a === "string" || typeof b === "string") return a === b;
  return Number(a) === Number(b);
}

const BUILTINS: Record<string, (src: string, args: ExprValue[]) => ExprValue> = {
  range: (src, args) => {
    if (args.length < 1 || args.length > 3) fnErr(src, "range() takes 1 to 3 arguments");
    const ns = args.map((a) => intArg(src, "range", a));
    const [start, stop, step] = ns.length === 1 ? [0, ns[0], 1] : [ns[0], ns[1], ns[2] ?? 1];
    if (step === 0) fnErr(src, "range() step must not be zero");
    const out: number[] = [];
    if ((stop - start) / step > 1e7) fnErr(src, "range() is too long");
    for (let x = start; step > 0 ? x < stop : x > stop; x += step) out.push(x);
    return out;
  },
  list: (src, args) => {
    if (args.length === 0) return [];
    if (args.length !== 1) fnErr(src, "list() takes at most 1 argument");
    const a = args[0];
    if (typeof a === "string") return [...a];
    if (!Array.isArray(a)) fnErr(src, `list() of a ${typeName(a)}`);
    return [...(a as ExprValue[])];
  },
  len: (src, args) => {
    if (args.length !== 1 || !(Array.isArray(args[0]) || typeof args[0] === "string")) {
      fnErr(src, "len() takes one list or string");
    }
    return (args[0] as ExprValue[] | string).length;
  },
  min: (src, args) => extreme(src, "min", args, (a, b) => a < b),
  max: (src, args) => extreme(src, "max", args, (a, b) => a > b),
  abs: (src, args) => Math.abs(numArgs(src, "abs", args, 1)[0]),
  int: (src, args) => Math.trunc(numArgs(src, "int", args, 1)[0]),
  float: (src, args) => numArgs(src, "float", args, 1)[0],
  sum: (src, args) => {
    if (args.length !== 1 || !Array.isArray(args[0])) fnErr(src, "sum() takes one list");
    return numArgs(src, "sum", args[0] as ExprValue[], -1).reduce((a, b) => a + b, 0);
  },
};

function fnErr(src: string, detail: string): never {
  throw new ExpressionError(src, detail);
}

function numArgs(src: string, fn: string, args: ExprValue[], n: number): number[] {
  if (n >= 0 && args.length !== n) fnErr(src, `${fn}() takes ${n} argument(s)`);
  return args.map((a) => {
    if (typeof a === "number" || typeof a === "boolean") return Number(a);
    return fnErr(src, `${fn}() of a ${typeName(a)}`);
  });
}

function intArg(src: string, fn: string, a: ExprValue): number {
  const [n] = numArgs(src, fn, [a], 1);
  if (!Number.isInteger(n)) fnErr(src, `${fn}() needs integers, got ${n}`);
  return n;
}

function extreme(
  src: string,
  fn: string,
  args: ExprValue[],
  better: (a: number, b: number) => boolean,
): number {
  const xs = numArgs(src, fn, args.length === 1 && Array.isArray(args[0]) ? args[0] : args, -1);
  if (xs.length === 0) fnErr(src, `${fn}() of nothing`);
  return xs.reduce((a, b) => (better(b, a) ? b : a));
}

/**
 * Parses a Kernel Tuner (Python) expression into a reusable evaluator.
 *
 * @param source the expression, e.g. `"32 <= block_size_x * block_size_y <= 1024"`
 * @param knownNames when given, every free name must be one of these
 * @throws {ExpressionError} on a syntax error or anything unsupported or unknown
 */
export function compileExpression(
  source: string,
  knownNames?: readonly string[],
): CompiledExpression {
  const toks = tokenize(source);
  let pos = 0;
  const free: string[] = [];
  const scopes: Set<string>[] = [];
  const peek = () => toks[pos];
  const err = (detail: string, t: Tok = peek()): never => {
    throw new ExpressionError(source, detail, t.col + 1);
  };
  const isOp = (text: string) => peek().kind === "op" && peek().text === text;
  const isKw = (text: string) => peek().kind === "kw" && peek().text === text;
  const expect = (text: string) => {
    if (!isOp(text) && !isKw(text)) err(`expected "${text}", found ${show(peek())}`);
    pos++;
  };
  const show = (t: Tok) => (t.kind === "end" ? "the end" : `"${t.text}"`);
  const num = (v: ExprValue, op: string): number => {
    if (typeof v === "number") return v;
    if (typeof v === "boolean") return v ? 1 : 0;
    throw new ExpressionError(source, `unsupported operand type for ${op}: ${typeName(v)}`);
  };

  const orExpr = (): Fn => {
    let left = andExpr();
    while (isKw("or")) {
      pos++;
      const a = left, b = andExpr();
      left = (env) => {
        const x = a(env);
        return truthy(x) ? x : b(env);
      };
    }
    return left;
  };
  const andExpr = (): Fn => {
    let left = notExpr();
    while (isKw("and")) {
      pos++;
      const a = left, b = notExpr();
      left = (env) => {
        const x = a(env);
        return truthy(x) ? b(env) : x;
      };
    }
    return left;
  };
  const notExpr = (): Fn => {
    if (isKw("not")) {
      pos++;
      const a = notExpr();
      return (env) => !truthy(a(env));
    }
    return comparison();
  };
  const compare = (op: string, a: ExprValue, b: ExprValue): boolean => {
    switch (op) {
      case "==":
        return equal(a, b);
      case "!=":
        return !equal(a, b);
      case "in":
      case "not in": {
        let found: boolean;
        if (Array.isArray(b)) found = b.some((x) => equal(a, x));
        else if (typeof b === "string" && typeof a === "string") found = b.includes(a);
        else {
          throw new ExpressionError(
            source,
            `unsupported operand types for ${op}: ${typeName(a)} and ${typeName(b)}`,
          );
        }
        return op === "in" ? found : !found;
      }
    }
    let x: number | string, y: number | string;
    if (typeof a === "string" && typeof b === "string") [x, y] = [a, b];
    else if (
      !Array.isArray(a) && !Array.isArray(b) && typeof a !== "string" && typeof b !== "string"
    ) {
      [x, y] = [Number(a), Number(b)];
    } else {
      throw new ExpressionError(
        source,
        `"${op}" is not supported between ${typeName(a)} and ${typeName(b)}`,
      );
    }
    return op === "<" ? x < y : op === "<=" ? x <= y : op === ">" ? x > y : x >= y;
  };
  const comparison = (): Fn => {
    const first = arith();
    const ops: string[] = [];
    const rest: Fn[] = [];
    for (;;) {
      const t = peek();
      if (t.kind === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(t.text)) {
        pos++;
        ops.push(t.text);
      } else if (isKw("in")) {
        pos++;
        ops.push("in");
      } else if (isKw("not") && toks[pos + 1].kind === "kw" && toks[pos + 1].text === "in") {
        pos += 2;
        ops.push("not in");
      } else break;
      rest.push(arith());
    }
    if (ops.length === 0) return first;
    return (env) => {
      let a = first(env);
      for (let i = 0; i < ops.length; i++) {
        const b = rest[i](env);
        if (!compare(ops[i], a, b)) return false;
        a = b;
      }
      return true;
    };
  };
  const arith = (): Fn => {
    let left = term();
    while (isOp("+") || isOp("-")) {
      const op = peek().text;
      pos++;
      const a = left, b = term();
      left = op === "-" ? (env) => num(a(env), "-") - num(b(env), "-") : (env) => {
        const x = a(env), y = b(env);
        if (Array.isArray(x) && Array.isArray(y)) return [...x, ...y];
        if (typeof x === "string" && typeof y === "string") return x + y;
        if (
          Array.isArray(x) || Array.isArray(y) || typeof x === "string" || typeof y === "string"
        ) {
          throw new ExpressionError(
            source,
            `unsupported operand types for +: ${typeName(x)} and ${typeName(y)}`,
          );
        }
        return num(x, "+") + num(y, "+");
      };
    }
    return left;
  };
  const term = (): Fn => {
    let left = unary();
    while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
      const op = peek().text;
      pos++;
      const a = left, b = unary();
      const zero = () => {
        throw new ExpressionError(source, `division by zero (${op})`);
      };
      if (op === "*") left = (env) => num(a(env), op) * num(b(env), op);
      else if (op === "/") {
        left = (env) => {
          const x = num(a(env), op), y = num(b(env), op);
          return y === 0 ? zero() : x / y;
        };
      } else if (op === "//") {
        left = (env) => {
          const x = num(a(env), op), y = num(b(env), op);
          return y === 0 ? zero() : Math.floor(x / y);
        };
      } else {
        left = (env) => {
          const x = num(a(env), op), y = num(b(env), op);
          if (y === 0) return zero();
          const r = x % y;
          return r !== 0 && (r < 0) !== (y < 0) ? r + y : r;
        };
      }
    }
    return left;
  };
  const unary = (): Fn => {
    if (isOp("-") || isOp("+")) {
      const op = peek().text;
      pos++;
      const a = unary();
      return op === "-" ? (env) => -num(a(env), "unary -") : (env) => num(a(env), "unary +");
    }
    return power();
  };
  const power = (): Fn => {
    const base = atom();
    if (!isOp("**")) return base;
    pos++;
    const exp = unary();
    return (env) => {
      const x = num(base(env), "**"), y = num(exp(env), "**");
      if (x === 0 && y < 0) {
        throw new ExpressionError(source, "0 cannot be raised to a negative power");
      }
      return x ** y;
    };
  };
  const atom = (): Fn => {
    const t = peek();
    if (t.kind === "num" || t.kind === "str") {
      pos++;
      const v = t.value!;
      return () => v;
    }
    if (t.kind === "kw" && (t.text === "True" || t.text === "False")) {
      pos++;
      const v = t.text === "True";
      return () => v;
    }
    if (t.kind === "name") {
      pos++;
      if (isOp("(")) return call(t);
      const name = t.text;
      if (!scopes.some((s) => s.has(name))) {
        if (knownNames && !knownNames.includes(name)) {
          err(`unknown name "${name}" (known: ${knownNames.join(", ")})`, t);
        }
        if (!free.includes(name)) free.push(name);
      }
      return (env) => {
        if (!(name in env)) throw new ExpressionError(source, `no value for name "${name}"`);
        const v = env[name];
        if (isScalar(v) || Array.isArray(v)) return v as ExprValue;
        throw new ExpressionError(source, `name "${name}" has an unsupported value ${describe(v)}`);
      };
    }
    if (isOp("(")) {
      pos++;
      const inner = orExpr();
      if (isOp(",")) err("tuples are not supported");
      expect(")");
      return inner;
    }
    if (isOp("[")) return list();
    return err(`unexpected ${show(t)}`);
  };
  const call = (nameTok: Tok): Fn => {
    const fn = BUILTINS[nameTok.text];
    if (!fn || scopes.some((s) => s.has(nameTok.text))) {
      err(
        `unknown function "${nameTok.text}" (known: ${Object.keys(BUILTINS).join(", ")})`,
        nameTok,
      );
    }
    expect("(");
    const args: Fn[] = [];
    while (!isOp(")")) {
      args.push(orExpr());
      if (!isOp(")")) expect(",");
    }
    pos++;
    return (env) => fn(source, args.map((a) => a(env)));
  };
  const list = (): Fn => {
    expect("[");
    if (isOp("]")) {
      pos++;
      return () => [];
    }
    // A comprehension binds its variable in the element and condition, which
    // precede it in the text: look ahead for `for NAME` at this nesting depth.
    let depth = 0, j = pos, varName: string | undefined;
    for (; toks[j].kind !== "end"; j++) {
      const t = toks[j];
      if (t.kind === "op" && (t.text === "(" || t.text === "[")) depth++;
      else if (t.kind === "op" && (t.text === ")" || t.text === "]")) {
        if (depth-- === 0) break;
      } else if (depth === 0 && t.kind === "kw" && t.text === "for") {
        if (toks[j + 1].kind !== "name") err("expected a name after for", toks[j + 1]);
        varName = toks[j + 1].text;
        break;
      }
    }
    if (varName !== undefined) {
      // The iterable is evaluated outside the comprehension's scope.
      const saved = pos;
      pos = j + 3;
      if (!(toks[j + 2].kind === "kw" && toks[j + 2].text === "in")) {
        err(`expected "in", found ${show(toks[j + 2])}`, toks[j + 2]);
      }
      const iter = orExpr();
      const after = pos;
      pos = saved;
      scopes.push(new Set([varName]));
      const elem = orExpr();
      if (!isKw("for")) err(`expected "for", found ${show(peek())}`);
      pos = after;
      let cond: Fn | undefined;
      if (isKw("if")) {
        pos++;
        cond = orExpr();
      }
      scopes.pop();
      if (isKw("for")) err("nested comprehensions are not supported");
      expect("]");
      const v = varName;
      return (env) => {
        const xs = iter(env);
        if (!Array.isArray(xs)) {
          throw new ExpressionError(source, `cannot iterate over a ${typeName(xs)}`);
        }
        const out: ExprValue[] = [];
        const inner: Record<string, unknown> = Object.create(env);
        for (const x of xs) {
          inner[v] = x;
          if (!cond || truthy(cond(inner))) out.push(elem(inner));
        }
        return out;
      };
    }
    const items: Fn[] = [];
    for (;;) {
      items.push(orExpr());
      if (isOp(",")) {
        pos++;
        if (isOp("]")) break;
      } else break;
    }
    expect("]");
    return (env) => items.map((f) => f(env));
  };

  const root = orExpr();
  if (peek().kind !== "end") err(`unexpected ${show(peek())}`);
  return { source, names: free, evaluate: root };
}

/**
 * Compiles restriction expressions into one predicate (all must hold).
 *
 * @param restrictions expressions, e.g. from {@link KernelTunerSpace.restrictions}
 * @param knownNames when given, every name used must be one of these
 * @throws {ExpressionError} on an expression that cannot be parsed or names an unknown parameter
 */
export function compileRestrictions(
  restrictions: readonly string[],
  knownNames?: readonly string[],
): (values: Record<string, unknown>) => boolean {
  const cs = restrictions.map((r) => compileExpression(r, knownNames));
  return (values) => {
    for (const c of cs) if (!truthy(c.evaluate(values))) return false;
    return true;
  };
}

/**
 * Python truthiness of an expression's value (`0`, `False`, `""` and `[]` are false).
 *
 * @param value a value computed by a {@link CompiledExpression}
 */
export function isTruthy(value: ExprValue): boolean {
  return truthy(value);
}
