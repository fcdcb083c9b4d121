/**
 * The `dense` template: `matmul`'s tiles on the dense layer's reduction `D`,
 * with its bias and ReLU (`Y`) fused at the tile.
 * @module
 */
import type { Template } from "./template.ts";
import { matmulApply, matmulKnobs } from "./matmul.ts";

/**
 * `dense`: matmul's knobs less `cache_write` and `order`; the epilogue `Y`
 * is the tile's output.
 *
 * @example
 * ```ts
 * import { DENSE } from "./dense.ts";
 * if (!DENSE.workloads.includes("dense")) throw new Error();
 * ```
 */
export const DENSE: Template = {
  workloads: ["dense"],
  knobs: (w) => matmulKnobs(w).filter((k) => k.name !== "cache_write" && k.name !== "order"),
  apply: (sch, v) => matmulApply("D", "Y")(sch, { ...v, order: 0 }),
};
