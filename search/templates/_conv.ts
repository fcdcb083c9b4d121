/**
 * Pieces the convolution templates share: the padding copies and the
 * reduction orders of a register tile.
 * @module
 */
import type { Schedule } from "../../ir/schedule.ts";

/**
 * The padding copy `P` of a channel-blocked input: a vector per pixel (the
 * block `b`), its channel blocks in parallel when `parallel`.
 */
export function vectorizeBlockedPadding(sch: Schedule, parallel: boolean): void {
  if (parallel) sch.parallel("P", "c");
  sch.vectorize("P", "b");
}

/**
 * The padding copy `P` of a convolution: its rows (loop `columns`) in 16-wide
 * vectors, masked at the edges, its channels in parallel when `parallel`.
 */
export function vectorizePadding(sch: Schedule, parallel: boolean, columns: string): void {
  if (parallel) sch.parallel("P", "c");
  const [, x1] = sch.split("P", columns, [null, 16]);
  sch.vectorize("P", x1);
}

/** Reduction orders of `conv2d-packed`'s register tile. */
export const CONV_REDUCE_ORDERS = [["rc", "ry", "rx"], ["ry", "rx", "rc"]];
