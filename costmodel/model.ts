/**
 * The cost-model protocol (MetaSchedule's update / predict / save / load):
 * a model learns from measured candidates and scores unmeasured ones so a
 * strategy can measure only the promising. Higher scores are better.
 * @module
 */
import type { Candidate } from "../ir/candidate.ts";

/** A measured candidate as a model sees it. */
export interface Sample {
  /** The candidate measured. */
  candidate: Candidate;
  /** Seconds per call; undefined when the candidate failed. */
  seconds?: number;
  /**
   * Which task it was measured on, when a model learns from several (another
   * layer of the network: transfer). Throughputs are normalised within a
   * group. Default: the model's own task.
   */
  group?: string;
}

/** A cost model. */
export interface CostModel {
  /** Name used in tables, e.g. `"random"` or `"xgb-rank"`. */
  readonly name: string;
  /**
   * Learns from new samples (the model keeps the history it needs). May
   * return a promise; callers await it before predicting again.
   */
  update(samples: Sample[]): void | Promise<void>;
  /** Scores candidates, higher is better (e.g. predicted throughput). */
  predict(candidates: Candidate[]): number[];
}
