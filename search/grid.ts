/**
 * Grid search (AutoTVM's GridSearchTuner, Kernel Tuner's brute_force): every
 * valid point of a knob space exactly once, in index order or in a seeded
 * shuffled order, then nothing.
 *
 * @example
 * ```ts
 * import { gridSearch } from "./grid.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([
 *   { name: "x", kind: "other", options: [1, 2, 3] },
 *   { name: "y", kind: "other", options: [1, 2] },
 * ], { isValid: (v) => v.x !== 2 });
 * const s = gridSearch(space);
 * if (s.propose(10).length !== 4 || s.propose(10).length !== 0) throw new Error();
 * ```
 * @module
 */
import { createPrng, type Prng } from "../ir/prng.ts";
import type { KnobSpace } from "../ir/knobs.ts";
import type { Candidate, CandidateOf, Observation, Strategy } from "./strategy.ts";

/** Options of {@link gridSearch}. */
export interface GridSearchOptions {
  /** `"index"` (default): flat index order; `"shuffled"`: a seeded random permutation. */
  order?: "index" | "shuffled";
  /** Seed of the shuffled order (unused in index order). Default 0. */
  seed?: number;
  /** Maps a point to a candidate. Default: `(knobs) => ({ knobs })`. */
  candidateOf?: CandidateOf;
}

/**
 * Grid search: proposes each valid point of `space` once (invalid points are
 * skipped), in index order or shuffled, then proposes nothing. The shuffled
 * order is a lazy Fisher–Yates permutation of the flat indices (memory grows
 * with the points proposed, not with the space). Observations are ignored.
 * Its name is `"grid"` (index order) or `"grid-shuffled"`.
 */
export function gridSearch(space: KnobSpace, options: GridSearchOptions = {}): Strategy {
  const candidateOf = options.candidateOf ?? ((knobs: number[]) => ({ knobs }));
  const shuffled = (options.order ?? "index") === "shuffled";
  const nextIndex = shuffled ? lazyPermutation(space.size, createPrng(options.seed ?? 0)) : (() => {
    let i = 0;
    return () => (i < space.size ? i++ : undefined);
  })();
  let done = false;
  return {
    name: shuffled ? "grid-shuffled" : "grid",
    propose(n: number): Candidate[] {
      const out: Candidate[] = [];
      while (!done && out.length < n) {
        const i = nextIndex();
        if (i === undefined) {
          done = true;
          break;
        }
        const p = space.point(i);
        if (space.isValid(p)) out.push(candidateOf(p));
      }
      return out;
    },
    observe(_observations: Observation[]): void {},
  };
}

/**
 * A lazy uniformly random permutation of `[0, size)` (sparse Fisher–Yates):
 * each call returns the next element, undefined after `size` calls.
 */
export function lazyPermutation(size: number, prng: Prng): () => number | undefined {
  const moved = new Map<number, number>();
  let i = 0;
  return () => {
    if (i >= size) return undefined;
    const j = i + randomBelow(prng, size - i);
    const at = (k: number) => moved.get(k) ?? k;
    const value = at(j);
    if (j !== i) moved.set(j, at(i));
    moved.delete(i);
    i++;
    return value;
  };
}

/** A uniform integer in [0, n) with 53 random bits (prng.int has 32). */
function randomBelow(prng: Prng, n: number): number {
  if (n <= 2 ** 32) return prng.int(n);
  const r = (prng.int(2 ** 21) * 2 ** 32 + prng.int(2 ** 32)) / 2 ** 53;
  return Math.min(n - 1, Math.floor(r * n));
}
