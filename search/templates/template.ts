/**
 * What a knob template is (AutoTVM style): a schedule written once as a
 * function of named knobs, for the workloads it names. Each template lives in
 * its own file of this folder; `registry.ts` names them and builds their
 * spaces.
 *
 * @example
 * ```ts
 * import type { Template } from "./template.ts";
 * const t: Template = { workloads: ["matmul"], knobs: () => [], apply: () => {} };
 * if (t.workloads[0] !== "matmul") throw new Error();
 * ```
 * @module
 */
import type { Schedule } from "../../ir/schedule.ts";
import type { Workload } from "../../ir/workloads.ts";
import type { RegisterFile } from "../../ir/target_cpu.ts";
import type { Knob, KnobSpace, Point } from "../../ir/knobs.ts";
import type { Candidate } from "../strategy.ts";

/** A knob space whose points are schedules of a workload. */
export interface TemplateSpace {
  /** Template name, e.g. `"matmul"`. */
  name: string;
  /** The workload the template schedules. */
  workload: Workload;
  /** Its knobs and their options. */
  space: KnobSpace;
  /** The candidate (knobs and trace) of a point. */
  candidateOf(point: Point): Candidate;
  /**
   * The template's heuristic point for this workload, when it has one and
   * the point is in the space: a hand-written rule's tile (AutoTVM's
   * fallback configuration, a Triton autotuner config), which a network's
   * tasks try as their second seed.
   */
  heuristic?(): Candidate | undefined;
}

/** Applies a point's knob values (by name) to a schedule. */
export type Apply = (sch: Schedule, v: Record<string, unknown>) => void;

/** A CPU knob template. */
export interface Template {
  /** Workload names the template schedules. */
  workloads: string[];
  knobs(w: Workload): Knob[];
  apply: Apply;
  /**
   * Points outside the space (knob values by name), like AutoTVM's template
   * restrictions; register rules count the target's register file.
   */
  isValid?: (values: Record<string, unknown>, w: Workload, target: RegisterFile) => boolean;
  /** A hand-written rule's point (knob values by name; those left out take their first option). */
  heuristic?: (w: Workload, target: RegisterFile) => Record<string, unknown> | undefined;
}

/** Output rows of a convolution workload (`shape` N, C, H, W, F, KH, KW, stride, pad). */
export function outHeight(w: Workload): number {
  const [, , H, , , KH, , stride, pad] = w.shape;
  return Math.floor((H + 2 * pad - KH) / stride) + 1;
}

/** Output columns of a convolution workload. */
export function outWidth(w: Workload): number {
  const [, , , W, , , KW, stride, pad] = w.shape;
  return Math.floor((W + 2 * pad - KW) / stride) + 1;
}
