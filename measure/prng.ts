/**
 * A small deterministic PRNG (mulberry32) for the random kernel inputs.
 *
 * @module
 */

/** Returns a generator of uniform floats in [-1, 1) seeded by `seed` (mulberry32). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return u * 2 - 1;
  };
}

/** Fills every array, in order, from one stream seeded by `seed`. */
export function fillUniform(seed: number, arrays: Float32Array[]): void {
  const next = mulberry32(seed);
  for (const array of arrays) {
    for (let i = 0; i < array.length; i++) array[i] = next();
  }
}
