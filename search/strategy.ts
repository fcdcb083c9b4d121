/**
 * The ask/tell protocol every search strategy implements: `propose(n)`
 * returns candidates, `observe(results)` takes their measurements, failures
 * included. The same strategy runs against a real runner, a replay of
 * recorded data, or a notebook cell stepping it by hand.
 * @module
 */
import type { Trace } from "../ir/trace.ts";
import type { ErrorKind } from "../measure/types.ts";

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
  candidate: Candidate;
  /** `"none"` when the kernel ran and was correct. */
  errorKind: ErrorKind;
  /** Seconds per call (median of repeats) when `errorKind` is `"none"`. */
  seconds?: number;
}

/** A search strategy (ask/tell). The same seed and observations give the same proposals. */
export interface Strategy {
  /** Name used in records and tables, e.g. `"random"`. */
  readonly name: string;
  /** Proposes up to `n` candidates (fewer when the space is exhausted). */
  propose(n: number): Candidate[];
  /**
   * Takes measurements of earlier proposals. May return a promise (a model
   * retraining); drivers await it before the next proposal.
   */
  observe(observations: Observation[]): void | Promise<void>;
}
