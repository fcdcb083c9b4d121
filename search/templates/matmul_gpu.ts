/**
 * The `matmul-gpu` template (AutoTVM's dense/matmul CUDA template): `tile_i`,
 * `tile_j` split in four, `tile_k` in three, unrolls, and tiles of A and B in
 * shared memory.
 * @module
 */
import { splitOptions } from "../../ir/knobs.ts";
import { fp32Only, type GpuTemplate, UNROLL_STEPS } from "./gpu_template.ts";

/**
 * `matmul-gpu`.
 *
 * @example
 * ```ts
 * import { MATMUL_GPU } from "./matmul_gpu.ts";
 * if (!MATMUL_GPU.workloads.includes("matmul")) throw new Error();
 * ```
 */
export const MATMUL_GPU: GpuTemplate = {
  workloads: ["matmul"],
  knobs: (w, math) => {
    fp32Only("matmul-gpu", math);
    const [M, N, K] = w.shape;
    return [
      { name: "tile_i", kind: "split", options: splitOptions(M, 4, 8) },
      { name: "tile_j", kind: "split", options: splitOptions(N, 4, 8) },
      { name: "tile_k", kind: "split", options: splitOptions(K, 3, 16) },
      { name: "auto_unroll", kind: "annotate", options: UNROLL_STEPS },
      { name: "unroll_explicit", kind: "annotate", options: [0, 1] },
      { name: "shared", kind: "other", options: [0, 1] },
    ];
  },
  shape: (v) => {
    const [ti, tj, tk] = [v.tile_i, v.tile_j, v.tile_k] as number[][];
    const kt = tk[1] * tk[2];
    const sharedBytes = v.shared === 1 ? (ti[2] * ti[3] + tj[2] * tj[3]) * kt * 4 : 0;
    return { threads: ti[2] * tj[2], tile: ti[3] * tj[3], sharedBytes };
  },
  apply: (sch, v) => {
    const [ti, tj, tk] = [v.tile_i, v.tile_j, v.tile_k] as number[][];
    const local = sch.cacheWrite("C");
    const shared = v.shared === 1
      ? [sch.cacheRead("A", "shared", [local]), sch.cacheRead("B", "shared", [local])]
      : [];
    const [i0, i1, i2, i3] = sch.split("C", "i", ti);
    const [j0, j1, j2, j3] = sch.split("C", "j", tj);
    sch.reorder("C", [i0, j0, i1, j1, i2, j2, i3, j3]);
    sch.bind("C", i0, "blockIdx.y");
    sch.bind("C", j0, "blockIdx.x");
    sch.bind("C", i2, "threadIdx.y");
    sch.bind("C", j2, "threadIdx.x");
    sch.computeAt(local, "C", j2);
    const [k0, k1, k2] = sch.split(local, "k", tk);
    sch.reorder(local, [k0, k1, k2, "i", "j"]);
    if (v.unroll_explicit === 1 && tk[2] > 1) sch.unroll(local, k2);
    sch.autoUnroll(local, v.auto_unroll as number);
    sch.autoUnroll("C", 64);
    // Tiles of A and B in shared memory per k0 step, fetched by all threads of the block.
    for (const copy of shared) {
      sch.computeAt(copy, local, k0);
      const fused = sch.fuse(copy, ["ax0", "ax1"]);
      const [, ty, tx] = sch.split(copy, fused, [null, ti[2], tj[2]]);
      sch.bind(copy, ty, "threadIdx.y");
      sch.bind(copy, tx, "threadIdx.x");
    }
  },
};
