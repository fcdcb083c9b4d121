/**
 * Schedules of the packed copies of a matmul (`cache_read(..., "global")`),
 * shared by the `matmul-packed` template and the packed sketches: B laid out
 * as k-major NR-column panels filled by a parallel loop over the panels, A as
 * k-major MR-row panels with the MR rows unrolled (BLIS's packing).
 * @module
 */
import type { RV, Schedule } from "../ir/schedule.ts";

/**
 * Packs B's copy `bp` into NR-column panels, copied by a parallel loop over
 * the panels (vectorized within one); computed at `at` (stage and loop) when
 * given, else once per call.
 */
export function packPanelsB(
  sch: Schedule,
  bp: string,
  nr: number | RV,
  at?: [string, string],
): void {
  sch.transformLayout(bp, 1, nr);
  if (at) sch.computeAt(bp, ...at);
  const [b0, b1] = sch.split(bp, "ax1", [null, nr]);
  sch.reorder(bp, [b0, "ax0", b1]);
  sch.parallel(bp, b0);
  sch.vectorize(bp, b1);
}

/** Packs A's copy `ap` into MR-row panels computed at `at` (stage and loop), the MR rows unrolled. */
export function packPanelsA(
  sch: Schedule,
  ap: string,
  mr: number | RV,
  at: [string, string],
): void {
  sch.transformLayout(ap, 0, mr);
  sch.computeAt(ap, ...at);
  const [a0, a1] = sch.split(ap, "ax0", [null, mr]);
  sch.reorder(ap, [a0, "ax1", a1]);
  sch.unroll(ap, a1);
}
