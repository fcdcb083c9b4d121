/**
 * The `matmul` template: tiles of i, j (three levels) and k (two), loop
 * order, cache write, vectorize, unroll, parallel. `dense` reuses its knobs
 * and its schedule.
 * @module
 */
import type { Workload } from "../../ir/workloads.ts";
import { type Knob, splitOptions } from "../../ir/knobs.ts";
import type { Apply, Template } from "./template.ts";

const UNROLL_STEPS = [0, 16, 64];

/** Orders of the loops inside the parallel tile (AutoTVM "re" knob), for matmul-like stages. */
const MATMUL_ORDERS = [
  ["k.0", "i.1", "j.1", "k.1", "i.2", "j.2"],
  ["i.1", "j.1", "k.0", "k.1", "i.2", "j.2"],
  ["i.1", "k.0", "j.1", "k.1", "i.2", "j.2"],
];

/** Tiles i (rows) and j (columns) in three levels and k in two. */
export function matmulKnobs(w: Workload): Knob[] {
  const [M, N, K] = w.shape;
  return [
    { name: "tile_i", kind: "split", options: splitOptions(M, 3, 16) },
    { name: "tile_j", kind: "split", options: splitOptions(N, 3, 64) },
    { name: "tile_k", kind: "split", options: splitOptions(K, 2) },
    { name: "order", kind: "reorder", options: MATMUL_ORDERS.map((_, i) => i) },
    { name: "cache_write", kind: "other", options: [0, 1] },
    { name: "vectorize", kind: "annotate", options: [0, 1] },
    { name: "unroll", kind: "annotate", options: UNROLL_STEPS },
    { name: "parallel", kind: "annotate", options: [0, 1] },
  ];
}

/**
 * Schedules a matmul-like reduction stage `red` (axes i, j, reduction k),
 * optionally computed into a local tile of `out` (its cache or its fused
 * element-wise consumer).
 */
export function matmulApply(red: string, out?: string): Apply {
  return (sch, v) => {
    const [ti, tj, tk] = [v.tile_i, v.tile_j, v.tile_k] as number[][];
    if (v.cache_write === 1 || out) {
      const inner = v.cache_write === 1 && !out ? sch.cacheWrite(red) : red;
      const outer = out ?? red;
      const [i0, i1, i2] = sch.split(outer, "i", [ti[0], ti[1], ti[2]]);
      const [j0, j1, j2] = sch.split(outer, "j", [tj[0], tj[1], tj[2]]);
      sch.reorder(outer, [i0, j0, i1, j1, i2, j2]);
      if (v.parallel === 1) sch.parallel(outer, sch.fuse(outer, [i0, j0]));
      sch.computeAt(inner, outer, j1);
      if (v.vectorize === 1) sch.vectorize(outer, j2);
      const [k0, k1] = sch.split(inner, "k", [tk[0], tk[1]]);
      sch.reorder(inner, [k0, k1, "i", "j"]);
      if (v.vectorize === 1) sch.vectorize(inner, "j");
      sch.autoUnroll(inner, v.unroll as number);
      return;
    }
    const [i0, i1, i2] = sch.split(red, "i", [ti[0], ti[1], ti[2]]);
    const [j0, j1, j2] = sch.split(red, "j", [tj[0], tj[1], tj[2]]);
    const [k0, k1] = sch.split(red, "k", [tk[0], tk[1]]);
    const inner = MATMUL_ORDERS[v.order as number].map((n) =>
      ({ "i.1": i1, "j.1": j1, "i.2": i2, "j.2": j2, "k.0": k0, "k.1": k1 })[n]!
    );
    sch.reorder(red, [i0, j0, ...inner]);
    if (v.parallel === 1) sch.parallel(red, sch.fuse(red, [i0, j0]));
    if (v.vectorize === 1) sch.vectorize(red, j2);
    sch.autoUnroll(red, v.unroll as number);
  };
}

/**
 * `matmul`: the knobs of {@link matmulKnobs} on the stage `C`.
 *
 * @example
 * ```ts
 * import { MATMUL } from "./matmul.ts";
 * if (!MATMUL.workloads.includes("matmul")) throw new Error();
 * ```
 */
export const MATMUL: Template = {
  workloads: ["matmul"],
  knobs: matmulKnobs,
  apply: matmulApply("C"),
};
