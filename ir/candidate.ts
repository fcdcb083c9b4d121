/**
 * What a search proposes and what measuring it gave: the candidate and
 * observation types shared by cost models, strategies and the tuning loop.
 * @module
 */
import type { Trace } from "./trace.ts";
import type { ErrorKind } from "./error_kind.ts";

/**
 * A point of a design space proposed for measurement: a schedule as a trace
 * (trace spaces and knob templates), a knob vector (knob spaces, replayed
 * data), or both.
 */
export interface Candidate {
  /** The schedule, as a trace (absent for replayed knob spaces, which have no IR). */
  trace?: Trace;
  /** Knob vector: one option index per knob (absent for trace spaces). */
  knobs?: number[];
}

/** Turns a knob point into a candidate (a template adds its trace). Default: `{ knobs }`. */
export type CandidateOf = (knobs: number[]) => Candidate;

/**
 * A candidate for a cost model to score: its knobs at once, its trace built
 * by `candidateOf` only if read (a template builds a schedule per trace, far
 * more than a knob featurizer costs).
 */
export function lazyCandidate(knobs: number[], candidateOf: CandidateOf): Candidate {
  let full: Candidate | undefined;
  return {
    knobs,
    get trace() {
      full ??= candidateOf(knobs);
      return full.trace;
    },
  };
}

/** What measuring a candidate gave. */
export interface Observation {
  /** The candidate measured. */
  candidate: Candidate;
  /** `"none"` when the kernel ran and was correct. */
  errorKind: ErrorKind;
  /** Seconds per call (median of repeats) when `errorKind` is `"none"`. */
  seconds?: number;
}
