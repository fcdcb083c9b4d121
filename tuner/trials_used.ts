/**
 * Samples needed, the RL study's measure of a strategy: how many trials a
 * tuning curve (a value to minimize after each trial, such as a network's
 * end-to-end estimate) needed to reach a target, with the target common to
 * the curves compared: within a fraction of the best final value of any of
 * them. bench/network_study.ts and notebooks/07_networks.ipynb report it.
 *
 * @example
 * ```ts
 * import { trialsUsed } from "./trials_used.ts";
 * const u = trialsUsed({ xgb: [NaN, 9, 5, 4], ga: [NaN, 9, 8, 8] }, 0.05);
 * if (u.target !== 4.2 || u.used.xgb !== 4 || u.used.ga !== undefined) throw new Error();
 * ```
 * @module
 */
import { checkNumber, described } from "../ir/check.ts";

/**
 * Trials a curve needed to reach `target`: the first trial (from 1) after
 * which its value is at most `target`; undefined when it never is (NaN, a
 * curve without a value yet, never reaches it).
 *
 * @example
 * ```ts
 * import { trialsToReach } from "./trials_used.ts";
 * if (trialsToReach([NaN, 9, 7, 5], 7) !== 3 || trialsToReach([9, 8], 7) !== undefined) throw new Error();
 * ```
 */
export function trialsToReach(curve: number[], target: number): number | undefined {
  const i = curve.findIndex((v) => v <= target);
  return i < 0 ? undefined : i + 1;
}

/**
 * Each curve's trials to reach a common target ({@link trialsToReach}): `1 +
 * within` times the best final value of any curve.
 *
 * @example
 * ```ts
 * import { trialsUsed } from "./trials_used.ts";
 * const u = trialsUsed({ a: [10, 5, 4], b: [10, 9, 8] }, 0.05);
 * if (u.target !== 4.2 || u.used.a !== 3 || u.used.b !== undefined) throw new Error();
 * ```
 */
export function trialsUsed(
  curves: Record<string, number[]>,
  within: number,
): { target: number; used: Record<string, number | undefined> } {
  if (typeof curves !== "object" || curves === null || Array.isArray(curves)) {
    throw new TypeError(`curves must be an object of curves by name, got ${described(curves)}`);
  }
  checkNumber(within, "within", { min: 0 });
  const finals = Object.values(curves).map((c) => c.at(-1) ?? NaN).filter((v) => !isNaN(v));
  // Rounded so that 1.05 x 4 is 4.2, not 4.2000000000000002.
  const target = +((1 + within) * Math.min(...finals)).toPrecision(12);
  return {
    target,
    used: Object.fromEntries(
      Object.entries(curves).map(([name, c]) => [name, trialsToReach(c, target)]),
    ),
  };
}
