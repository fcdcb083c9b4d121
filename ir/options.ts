/**
 * Option objects with defaults: the one merge the models and agents share.
 *
 * @example
 * ```ts
 * import { withDefaults } from "./options.ts";
 * const o = withDefaults<{ a?: number; b?: number }>({ a: 1, b: 2 }, { b: undefined });
 * if (o.b !== 2) throw new Error();
 * ```
 * @module
 */

/**
 * `defaults` with every option of `options` that is not `undefined` put in
 * its place (an explicit `undefined` keeps the default, unlike a spread).
 */
export function withDefaults<T extends object>(defaults: Required<T>, options: T): Required<T> {
  const o = { ...defaults };
  for (const [k, v] of Object.entries(options)) {
    if (v !== undefined) (o as Record<string, unknown>)[k] = v;
  }
  return o;
}
