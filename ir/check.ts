/**
 * Checks of a library call's arguments: each throws a `TypeError` (wrong
 * kind of value) or a `RangeError` (right kind, out of range) whose message
 * names the option and what it got, so misuse from a script reads as one
 * line instead of `Cannot read properties of undefined` deep inside.
 *
 * @example
 * ```ts
 * import { checkInteger, checkObject } from "./check.ts";
 * const o = checkObject({ trials: 0 }, "tune options");
 * try {
 *   checkInteger(o.trials, "trials", { min: 1 });
 * } catch (e) {
 *   if (!(e instanceof RangeError) || !/trials must be an integer >= 1, got 0/.test(e.message)) {
 *     throw e;
 *   }
 * }
 * ```
 * @module
 */
import type { Workload } from "./workloads.ts";

/** A short rendering of a value for an error message (`"x"`, `123`, `undefined`, `an array`). */
export function described(v: unknown): string {
  if (v === undefined) return "undefined";
  if (typeof v === "function") return "a function";
  if (typeof v === "bigint") return `${v}n`;
  if (Array.isArray(v)) return v.length <= 8 ? JSON.stringify(v) ?? "an array" : "an array";
  try {
    const s = JSON.stringify(v);
    if (s === undefined) return String(v);
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
  } catch {
    return typeof v;
  }
}

/** `v` as an object of options (a TypeError naming `name` otherwise). */
export function checkObject(v: unknown, name: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new TypeError(`${name} must be an object, got ${described(v)}`);
  }
  return v as Record<string, unknown>;
}

/** Throws a TypeError naming an option of `o` not in `known` (a misspelt or misplaced option). */
export function checkKnown(
  o: Record<string, unknown>,
  known: readonly string[],
  name: string,
): void {
  for (const k of Object.keys(o)) {
    if (!known.includes(k)) {
      throw new TypeError(
        `${name}: unknown option ${JSON.stringify(k)} (got ${described(o[k])}); known: ${
          known.join(", ")
        }`,
      );
    }
  }
}

/** Range of {@link checkInteger} and {@link checkNumber}; `optional` lets `undefined` pass. */
export interface Bounds {
  min?: number;
  max?: number;
  /** Greater than `min`, not equal (numbers). */
  above?: boolean;
  optional?: boolean;
}

/** `v` as an integer within `bounds`. */
export function checkInteger(v: unknown, name: string, bounds: Bounds = {}): number {
  if (v === undefined && bounds.optional) return v as unknown as number;
  const { min = -Infinity, max = Infinity } = bounds;
  const range = min > -Infinity && max < Infinity
    ? ` between ${min} and ${max}`
    : min > -Infinity
    ? ` >= ${min}`
    : max < Infinity
    ? ` <= ${max}`
    : "";
  if (typeof v !== "number") {
    throw new TypeError(`${name} must be an integer${range}, got ${described(v)}`);
  }
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new RangeError(`${name} must be an integer${range}, got ${v}`);
  }
  return v;
}

/** `v` as a finite number within `bounds`. */
export function checkNumber(v: unknown, name: string, bounds: Bounds = {}): number {
  if (v === undefined && bounds.optional) return v as unknown as number;
  const { min = -Infinity, max = Infinity, above = false } = bounds;
  const range = min > -Infinity ? (above ? ` above ${min}` : ` >= ${min}`) : "";
  const upto = max < Infinity ? `${range ? " and" : ""} <= ${max}` : "";
  if (typeof v !== "number") {
    throw new TypeError(`${name} must be a number${range}${upto}, got ${described(v)}`);
  }
  if (!Number.isFinite(v) && !(v === Infinity && max === Infinity)) {
    throw new RangeError(`${name} must be a number${range}${upto}, got ${v}`);
  }
  if ((above ? v <= min : v < min) || v > max) {
    throw new RangeError(`${name} must be a number${range}${upto}, got ${v}`);
  }
  return v;
}

/** `v` as a string (non-empty unless `allowEmpty`). */
export function checkString(
  v: unknown,
  name: string,
  o: { optional?: boolean; allowEmpty?: boolean; what?: string } = {},
): string {
  if (v === undefined && o.optional) return v as unknown as string;
  const what = o.what ?? "a string";
  if (typeof v !== "string") throw new TypeError(`${name} must be ${what}, got ${described(v)}`);
  if (!o.allowEmpty && v.trim() === "") throw new RangeError(`${name} must be ${what}, got ""`);
  return v;
}

/** `v` as a function. */
export function checkFunction(v: unknown, name: string, o: { optional?: boolean } = {}): void {
  if (v === undefined && o.optional) return;
  if (typeof v !== "function") {
    throw new TypeError(`${name} must be a function, got ${described(v)}`);
  }
}

/** `v` as a boolean. */
export function checkBoolean(v: unknown, name: string, o: { optional?: boolean } = {}): void {
  if (v === undefined && o.optional) return;
  if (typeof v !== "boolean") {
    throw new TypeError(`${name} must be true or false, got ${described(v)}`);
  }
}

/** Throws a TypeError naming `name` when `w` is not a workload (`createWorkload`). */
export function checkWorkload(w: unknown, name: string): void {
  const x = w as Partial<Workload> | undefined;
  if (
    typeof x !== "object" || x === null || typeof x.name !== "string" || !Array.isArray(x.shape) ||
    !Array.isArray(x.outputs)
  ) {
    throw new TypeError(
      `${name} must be a workload (createWorkload("matmul", [64, 64, 64])), got ${described(w)}`,
    );
  }
}

/**
 * Throws a TypeError naming `name` when `v` is not a knob space (an object
 * with a `knobs` list, as `templateSpace(...).space` and `openSpace(...).space`).
 *
 * @example
 * ```ts
 * import { checkKnobSpace } from "./check.ts";
 * checkKnobSpace({ knobs: [] }, "space");
 * try {
 *   checkKnobSpace(undefined, "space");
 *   throw new Error("accepted");
 * } catch (e) {
 *   if (!(e instanceof TypeError) || !/^space must be a knob space/.test(e.message)) throw e;
 * }
 * ```
 */
export function checkKnobSpace(v: unknown, name: string): void {
  const x = v as { knobs?: unknown } | undefined;
  if (typeof x !== "object" || x === null || !Array.isArray(x.knobs)) {
    throw new TypeError(
      `${name} must be a knob space (openSpace(...).space, templateSpace(...).space), got ${
        described(v)
      }`,
    );
  }
}

/**
 * `v` as an array (a TypeError naming `name` and `what` it should hold otherwise).
 *
 * @example
 * ```ts
 * import { checkArray } from "./check.ts";
 * const xs = checkArray([1, 2], "values", "numbers");
 * try {
 *   checkArray(5, "values", "numbers");
 *   throw new Error("accepted");
 * } catch (e) {
 *   if (!(e instanceof TypeError) || e.message !== "values must be a list of numbers, got 5") {
 *     throw e;
 *   }
 * }
 * if (xs.length !== 2) throw new Error();
 * ```
 */
export function checkArray(v: unknown, name: string, what: string): unknown[] {
  if (!Array.isArray(v)) {
    throw new TypeError(`${name} must be a list of ${what}, got ${described(v)}`);
  }
  return v;
}
