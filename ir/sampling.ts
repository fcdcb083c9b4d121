/**
 * Pure samplers behind the sampling instructions (MetaSchedule's
 * `sample_perfect_tile`, `sample_categorical`). Each takes an injected PRNG.
 *
 * @example
 * ```ts
 * import { samplePerfectTile } from "./sampling.ts";
 * import { createPrng } from "./prng.ts";
 * const f = samplePerfectTile(512, 4, 16, createPrng(3));
 * if (f.reduce((a, b) => a * b) !== 512 || f[3] > 16) throw new Error();
 * ```
 * @module
 */
import type { Prng } from "./prng.ts";

/** Prime factors of n (n >= 1), ascending with repetition. */
export function primeFactors(n: number): number[] {
  const out: number[] = [];
  let m = n;
  for (let p = 2; p * p <= m; p++) {
    while (m % p === 0) {
      out.push(p);
      m /= p;
    }
  }
  if (m > 1) out.push(m);
  return out;
}

/** Divisors of n, ascending. */
export function divisors(n: number): number[] {
  const out: number[] = [];
  for (let d = 1; d <= n; d++) if (n % d === 0) out.push(d);
  return out;
}

/**
 * Samples `n` factors (outermost first) whose product is exactly `extent`,
 * the innermost at most `maxInnermost`: the innermost is drawn uniformly among
 * the allowed divisors, then each remaining prime factor goes to a uniformly
 * drawn outer position.
 */
export function samplePerfectTile(
  extent: number,
  n: number,
  maxInnermost: number,
  prng: Prng,
): number[] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`Cannot tile into ${n} parts`);
  const allowed = divisors(extent).filter((d) => d <= Math.max(1, maxInnermost));
  const innermost = n === 1 ? extent : prng.pick(allowed);
  const factors = new Array(n).fill(1);
  factors[n - 1] = innermost;
  for (const p of primeFactors(extent / innermost)) factors[prng.int(n - 1)] *= p;
  return factors;
}

/** Checks a perfect-tile decision; returns a reason when it is not valid. */
export function checkPerfectTile(
  decision: unknown,
  extent: number,
  n: number,
  maxInnermost: number,
): string | undefined {
  if (!Array.isArray(decision) || decision.length !== n) return `expected ${n} factors`;
  if (!decision.every((d) => Number.isInteger(d) && d >= 1)) return "factors must be positive";
  const product = decision.reduce((a: number, b: number) => a * b, 1);
  if (product !== extent) return `product ${product} is not the extent ${extent}`;
  if (n > 1 && decision[n - 1] > Math.max(1, maxInnermost)) {
    return `innermost ${decision[n - 1]} exceeds ${maxInnermost}`;
  }
  return undefined;
}

/** Samples an index with the given (unnormalised) probabilities. */
export function sampleCategorical(probs: readonly number[], prng: Prng): number {
  const total = probs.reduce((a, b) => a + b, 0);
  if (!(total > 0)) throw new RangeError("sample_categorical needs a positive probability");
  let r = prng.next() * total;
  for (let i = 0; i < probs.length; i++) {
    r -= probs[i];
    if (r < 0) return i;
  }
  return probs.length - 1;
}
