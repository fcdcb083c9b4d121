/**
 * The ask/tell protocol every search strategy implements: `propose(n)`
 * returns candidates, `observe(results)` takes their measurements, failures
 * included. The same strategy runs against a real runner, a replay of
 * recorded data, or a notebook cell stepping it by hand.
 * @module
 */
import type { Candidate, Observation } from "../ir/candidate.ts";

export {
  type Candidate,
  type CandidateOf,
  lazyCandidate,
  type Observation,
} from "../ir/candidate.ts";

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
