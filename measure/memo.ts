/**
 * A {@link Measurer} that measures each configuration once and answers
 * again from memory: `compare` on a live workload shares one measurement of
 * a configuration among all its strategies and seeds, as a replay would. A
 * result of a transient error kind (`isTransient`) is not kept, so it is
 * measured again when asked again.
 *
 * @example
 * ```ts
 * import { memoMeasurer } from "./memo.ts";
 * import type { Measurer } from "./measurer.ts";
 * let measured = 0;
 * const inner: Measurer = {
 *   name: "slow",
 *   measure: (batch) => {
 *     measured += batch.length;
 *     return Promise.resolve(batch.map(() => ({ errorKind: "none" as const, times: [1], buildSeconds: 0, runSeconds: 0 })));
 *   },
 * };
 * const m = memoMeasurer(inner, (c) => String(c.knobs));
 * await m.measure([{ knobs: [1] }, { knobs: [2] }]);
 * await m.measure([{ knobs: [2] }, { knobs: [3] }, { knobs: [3] }]);
 * if (measured !== 3) throw new Error(`${measured}`);
 * ```
 * @module
 */
import type { Candidate } from "../ir/candidate.ts";
import { isTransient } from "../ir/error_kind.ts";
import type { MeasureBatchOptions, Measurer, MeasureResult } from "./measurer.ts";

/** A memoizing measurer, and what it has measured. */
export interface MemoMeasurer extends Measurer {
  /** Results by key: measured here, or given with {@link MemoMeasurer.remember}. */
  readonly results: ReadonlyMap<string, MeasureResult>;
  /** Adds a result measured elsewhere (e.g. read back from the records). */
  remember(key: string, result: MeasureResult): void;
  /** Closes the wrapped measurer. */
  close(): Promise<void>;
}

/** Wraps `inner` so that each key is measured once; see the module documentation. */
export function memoMeasurer(
  inner: Measurer,
  keyOf: (c: Candidate) => string,
): MemoMeasurer {
  const results = new Map<string, MeasureResult>();
  const remember = (key: string, r: MeasureResult) => {
    if (!isTransient(r.errorKind)) results.set(key, r);
  };
  return {
    name: inner.name,
    results,
    remember,
    async measure(batch: readonly Candidate[], o: MeasureBatchOptions = {}) {
      const keys = batch.map(keyOf);
      /** Index in `todo` of each key measured in this call. */
      const slot = new Map<string, number>();
      const todo: Candidate[] = [];
      keys.forEach((k, i) => {
        if (!results.has(k) && !slot.has(k)) {
          slot.set(k, todo.length);
          todo.push(batch[i]);
        }
      });
      const out: (MeasureResult | undefined)[] = keys.map((k) => results.get(k));
      out.forEach((r, i) => r && o.onResult?.(i, r));
      const fresh = todo.length === 0 ? [] : await inner.measure(todo, {
        ...(o.cutoffSeconds !== undefined ? { cutoffSeconds: o.cutoffSeconds } : {}),
      });
      fresh.forEach((r, j) => remember(keyOf(todo[j]), r));
      return keys.map((k, i) => {
        if (out[i]) return out[i]!;
        const r = fresh[slot.get(k)!];
        o.onResult?.(i, r);
        return r;
      });
    },
    close: () => inner.close?.() ?? Promise.resolve(),
  };
}
