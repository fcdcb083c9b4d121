/**
 * The `matmul-packed` template: a register tile MR x NR, cache blocks
 * MC x NC x KC, packed A and B panels, parallel row blocks (BLIS, TVM's
 * `dense_pack`).
 * @module
 */
import type { Schedule } from "../../ir/schedule.ts";
import type { Workload } from "../../ir/workloads.ts";
import type { Knob } from "../../ir/knobs.ts";
import { packPanelsA, packPanelsB } from "../packing.ts";
import type { Template } from "./template.ts";

/**
 * Knobs of `matmul-packed`, BLIS/TVM-`dense_pack` style: a register tile of
 * MR x NR accumulators (`cache_write` local, rows unrolled, columns in
 * vectors), MC x NC cache blocks (counted in register tiles), packed
 * operands (`cache_read` "global" + `transform_layout` into k-major panels),
 * the order of the tile loops in a block, an unroll of the reduction, the
 * parallel outer loop, and KC (0: the whole reduction inside the register
 * tile, TVM's `dense_pack`; 256 or 512: BLIS's KC blocks, see
 * `packedKcApply`).
 */
function packedKnobs(_w: Workload): Knob[] {
  return [
    { name: "mr", kind: "split", options: [4, 6, 8] },
    { name: "nr", kind: "split", options: [16, 32, 48, 64] },
    { name: "mc", kind: "split", options: [1, 2, 4, 8, 16, 32] },
    { name: "nc", kind: "split", options: [1, 2, 4, 8, 16] },
    { name: "pack", kind: "other", options: ["none", "B", "AB"] },
    { name: "order", kind: "reorder", options: [0, 1] },
    { name: "unroll_k", kind: "annotate", options: [1, 2, 4] },
    { name: "parallel", kind: "annotate", options: [0, 1] },
    { name: "kc", kind: "split", options: [0, 256, 512] },
  ];
}

/**
 * The loop nest of `matmul-packed` (names of the C stage's loops):
 * `io` (parallel: MC-row blocks; A packed here, per thread), `jo`
 * (NC-column blocks), then `ir`/`jr` (register tiles, in the knob's order)
 * where the tile `C_local` is computed: `k` (split by `unroll_k`), then MR
 * rows unrolled and NR columns vectorized. B is packed once per call into
 * `[N/NR][K][NR]` panels by a parallel loop; A into `[MC/MR][K][MR]`.
 */
function packedApply(sch: Schedule, v: Record<string, unknown>): void {
  if ((v.kc as number) > 0) return packedKcApply(sch, v);
  const [MR, NR, mc, nc, uk] = [v.mr, v.nr, v.mc, v.nc, v.unroll_k] as number[];
  const local = sch.cacheWrite("C");
  const pack = v.pack as string;
  const bp = pack !== "none" ? sch.cacheRead("B", "global", [local]) : undefined;
  const ap = pack === "AB" ? sch.cacheRead("A", "global", [local]) : undefined;
  const [io, ir, ii] = sch.split("C", "i", [null, mc, MR]);
  const [jo, jr, ji] = sch.split("C", "j", [null, nc, NR]);
  sch.reorder("C", [io, jo, ...(v.order === 0 ? [ir, jr] : [jr, ir]), ii, ji]);
  if (v.parallel === 1) sch.parallel("C", io);
  sch.computeAt(local, "C", v.order === 0 ? jr : ir);
  sch.unroll("C", ii);
  sch.vectorize("C", ji);
  if (uk > 1) {
    const [k0, k1] = sch.split(local, "k", [null, uk]);
    sch.reorder(local, [k0, k1, "i", "j"]);
    sch.unroll(local, k1);
  } else sch.reorder(local, ["k", "i", "j"]);
  sch.unroll(local, "i");
  sch.vectorize(local, "j");
  if (bp) packPanelsB(sch, bp, NR);
  if (ap) packPanelsA(sch, ap, MR, ["C", io]);
}

/**
 * `matmul-packed` with a KC block (knob `kc` > 0), BLIS's loop order: `jo`
 * (NC columns), `ko` (KC of the reduction; B's KC x NC block packed here by
 * a parallel loop, shared by the threads), `io` (parallel MC rows; A's MC x
 * KC block packed per thread), the register tiles, then `ki`, MR rows
 * unrolled and NR columns vectorized. C accumulates across KC blocks; the
 * C generator keeps each tile's accumulators in vector variables over `ki`.
 */
function packedKcApply(sch: Schedule, v: Record<string, unknown>): void {
  const [MR, NR, mc, nc, uk, kc] = [v.mr, v.nr, v.mc, v.nc, v.unroll_k, v.kc] as number[];
  const pack = v.pack as string;
  const bp = pack !== "none" ? sch.cacheRead("B", "global", ["C"]) : undefined;
  const ap = pack === "AB" ? sch.cacheRead("A", "global", ["C"]) : undefined;
  const [io, ir, ii] = sch.split("C", "i", [null, mc, MR]);
  const [jo, jr, ji] = sch.split("C", "j", [null, nc, NR]);
  const [ko, ki] = sch.split("C", "k", [null, kc]);
  const tiles = v.order === 0 ? [ir, jr] : [jr, ir];
  if (uk > 1) {
    const [k0, k1] = sch.split("C", ki, [null, uk]);
    sch.reorder("C", [jo, ko, io, ...tiles, k0, k1, ii, ji]);
    sch.unroll("C", k1);
  } else sch.reorder("C", [jo, ko, io, ...tiles, ki, ii, ji]);
  if (v.parallel === 1) sch.parallel("C", io);
  sch.unroll("C", ii);
  sch.vectorize("C", ji);
  if (bp) packPanelsB(sch, bp, NR, ["C", ko]);
  if (ap) packPanelsA(sch, ap, MR, ["C", io]);
}

/**
 * `matmul-packed`: {@link packedKnobs} applied by {@link packedApply}.
 *
 * @example
 * ```ts
 * import { MATMUL_PACKED } from "./matmul_packed.ts";
 * if (!MATMUL_PACKED.workloads.includes("matmul")) throw new Error();
 * ```
 */
export const MATMUL_PACKED: Template = {
  workloads: ["matmul"],
  knobs: packedKnobs,
  apply: packedApply,
};
