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
  /**
   * Optional: candidates already measured that the strategy wants timed
   * again (an incumbent a newcomer beats by less than the noise, say). The
   * tuning loop (tuner/loop.ts) asks after each `observe`, times them once
   * more with the run's measurer and gives the figures to
   * {@link Strategy.observeRemeasured}. A re-measurement is not a trial: it
   * is not recorded in the run, and the trial budget is unchanged (the loop
   * counts them in `TuneOutcome.remeasured`). A driver without the hook
   * never calls it: a strategy must work on without the answer.
   */
  remeasure?(): Candidate[];
  /** Optional: the figures of the candidates {@link Strategy.remeasure} asked for, in its order. */
  observeRemeasured?(observations: Observation[]): void | Promise<void>;
}
