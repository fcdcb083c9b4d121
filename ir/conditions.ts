/**
 * The machine's conditions while a result was measured, as a live measurement
 * records them beside its times (measure/conditions.ts reads them). Each field
 * is present only when the machine let it be read: never a guess.
 *
 * @example
 * ```ts
 * import type { MeasureConditions } from "./conditions.ts";
 * const c: MeasureConditions = { load1: 1.5, steal: 0.02 }; // no frequency readable
 * if (c.cpuMhz !== undefined) throw new Error();
 * ```
 * @module
 */

/** Conditions during one measurement; see the module documentation. */
export interface MeasureConditions {
  /** The 1-minute load average (/proc/loadavg) when the result arrived. */
  load1?: number;
  /**
   * Fraction (0-1) of the CPU time stolen by the hypervisor from the start of
   * the batch to the result's arrival (/proc/stat, all CPUs).
   */
  steal?: number;
  /** Mean current CPU frequency in MHz (cpufreq's scaling_cur_freq, else /proc/cpuinfo). */
  cpuMhz?: number;
  /**
   * The machine's speed (GB/s): the slowest thread of the kernels' OpenMP
   * team sweeping a buffer of twice its L2 cache, as the C harness's probe timed it just before and just after the repeats, the
   * slower of the two (measure/harness.ts). Compared with the run's other
   * results, it shows a result timed while the machine ran slower than
   * usual, which the load, the steal time and the frequency may not show.
   */
  probeGBps?: number;
}

/** Names of the {@link MeasureConditions} fields, in the order records and exports list them. */
export const CONDITION_FIELDS: readonly (keyof MeasureConditions)[] = Object.freeze([
  "load1",
  "steal",
  "cpuMhz",
  "probeGBps",
]);
