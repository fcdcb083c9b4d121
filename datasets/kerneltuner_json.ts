/**
 * Reading Kernel Tuner JSON files (`.json` or `.json.gz`, within the limits of
 * `ir/limits.ts`) and the error every Kernel Tuner reader raises, with the small
 * validation helpers the cache reader, the space-file reader and the
 * restriction evaluator share.
 *
 * @example
 * ```ts
 * import { KernelTunerError } from "./kerneltuner_json.ts";
 * const e = new KernelTunerError("expected a string", { file: "a.json", field: "kernel_name" });
 * console.log(e.message); // a.json: field "kernel_name": expected a string
 * ```
 * @module
 */

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

/** A value of a tuning parameter (Kernel Tuner parameters are JSON scalars). */
export type ParamValue = number | string | boolean;

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
 * import { kernelTunerCaches } from "./kerneltuner_cache.ts";
 * import { readKernelTunerJSON } from "./kerneltuner_json.ts";
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

/**
 * Whether `x` is a JSON object (not null, not a list); a helper of the Kernel Tuner readers.
 *
 * @param x a parsed JSON value
 * @example
 * ```ts
 * import { isRecord } from "./kerneltuner_json.ts";
 * console.log(isRecord({ a: 1 }), isRecord([1])); // true false
 * ```
 */
export function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/**
 * Whether `x` can be a tuning parameter's value: a finite number, a string or a boolean.
 *
 * @param x a parsed JSON value
 * @example
 * ```ts
 * import { isScalar } from "./kerneltuner_json.ts";
 * console.log(isScalar(32), isScalar(Infinity), isScalar([32])); // true false false
 * ```
 */
export function isScalar(x: unknown): x is ParamValue {
  return (typeof x === "number" && Number.isFinite(x)) || typeof x === "string" ||
    typeof x === "boolean";
}

/**
 * Describes a JSON value for an error message: its type and, for a scalar, up
 * to 40 characters of it.
 *
 * @param x a parsed JSON value, or `undefined` for a missing field
 * @example
 * ```ts
 * import { describe } from "./kerneltuner_json.ts";
 * console.log(describe("abc"), describe(undefined)); // string "abc" nothing (the field is missing)
 * ```
 */
export function describe(x: unknown): string {
  if (x === undefined) return "nothing (the field is missing)";
  if (x === null) return "null";
  if (Array.isArray(x)) return "a list";
  if (typeof x === "object") return "an object";
  const s = JSON.stringify(x) ?? String(x);
  return `${typeof x} ${s.length > 40 ? s.slice(0, 40) + "…" : s}`;
}
