/**
 * A small seeded pseudo-random generator (SplitMix32 seeding xoshiro128**).
 * Every sampler in tunebook takes one of these, injected, never global, so a
 * seed reproduces a whole run.
 *
 * @example
 * ```ts
 * import { createPrng } from "./prng.ts";
 * const a = createPrng(1), b = createPrng(1);
 * if (a.next() !== b.next()) throw new Error("not reproducible");
 * ```
 * @module
 */

/** A seeded source of random numbers. */
export interface Prng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). Throws a RangeError when n < 1. */
  int(n: number): number;
  /** Picks one element uniformly. */
  pick<T>(items: readonly T[]): T;
  /** An independent generator derived from this one's stream. */
  fork(): Prng;
}

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** Creates a generator from an integer seed (any 32-bit value). */
export function createPrng(seed: number): Prng {
  if (!Number.isFinite(seed)) throw new RangeError(`Cannot seed a PRNG with ${seed}`);
  const sm = splitmix32(Math.trunc(seed));
  let a = sm(), b = sm(), c = sm(), d = sm();
  const nextU32 = (): number => {
    const r = Math.imul(rotl(Math.imul(b, 5) >>> 0, 7), 9) >>> 0;
    const t = (b << 9) >>> 0;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return r;
  };
  const prng: Prng = {
    next: () => nextU32() / 4294967296,
    int: (n: number) => {
      if (!(n >= 1)) throw new RangeError(`Cannot draw an integer below ${n}`);
      return Math.floor((nextU32() / 4294967296) * Math.floor(n));
    },
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError("Cannot pick from an empty list");
      return items[prng.int(items.length)];
    },
    fork: () => createPrng(nextU32()),
  };
  return prng;
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
