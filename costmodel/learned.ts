/**
 * A learned cost model: features of candidates, a regressor (XGBoost, MLP),
 * and AutoTVM's target: throughput normalised by the best seen, failures 0.
 * Every update refits on the whole history (AutoTVM's XGBTuner does the
 * same each plan); until the first fit, predictions are zeros, so a
 * model-based strategy falls back on its own exploration.
 * @module
 */
import type { Candidate } from "../ir/candidate.ts";
import type { CostModel, Sample } from "./model.ts";
import type { Matrix, Regressor } from "./regressor.ts";

/** Features of a batch of candidates, as a matrix. */
export type Featurizer = (candidates: Candidate[]) => Matrix;

/** Options of {@link learnedModel}. */
export interface LearnedModelOptions {
  /** Name in tables. Default: the regressor's. */
  name?: string;
  /** The learner. */
  regressor: Regressor;
  /** Turns candidates into the regressor's feature rows. */
  features: Featurizer;
  /** Samples to start from (transfer: records of other workloads or devices). Default none. */
  pretrain?: Sample[];
  /** Fewest samples before the first fit (Infinity: never refit, a frozen model). Default 8. */
  minSamples?: number;
  /** The regressor is already trained (a loaded model): predict with it at once. Default false. */
  fitted?: boolean;
}

/** A cost model that also reports how many samples it learned from. */
export interface LearnedModel extends CostModel {
  /** Samples learned from so far (pretraining included). */
  readonly samples: number;
}

/**
 * Throughput targets: (1 / seconds) / max over the samples of the same
 * {@link Sample.group} (tasks of other sizes learned from in one model each
 * have their best at 1, as in AutoTVM's transfer across tasks); failures are 0.
 *
 * @example
 * ```ts
 * import { throughputTargets } from "./learned.ts";
 * const t = throughputTargets([
 *   { candidate: { knobs: [0] }, seconds: 2e-3 },
 *   { candidate: { knobs: [1] }, seconds: 1e-3 },
 *   { candidate: { knobs: [0] }, seconds: 8e-3, group: "conv2d(1,3,224,224,64,7,7,2,3)" },
 *   { candidate: { knobs: [2] } },
 * ]);
 * if (t.join() !== "0.5,1,1,0") throw new Error(t.join());
 * ```
 */
export function throughputTargets(samples: readonly Sample[]): Float32Array {
  const speed = samples.map((s) => (s.seconds && s.seconds > 0 ? 1 / s.seconds : 0));
  const best = new Map<string | undefined, number>();
  samples.forEach((s, i) => best.set(s.group, Math.max(best.get(s.group) ?? 0, speed[i])));
  return Float32Array.from(speed, (v, i) => {
    const b = best.get(samples[i].group)!;
    return b > 0 ? v / b : 0;
  });
}

/** Creates a learned cost model. */
export function learnedModel(o: LearnedModelOptions): LearnedModel {
  const history: Sample[] = [...(o.pretrain ?? [])];
  const minSamples = o.minSamples ?? 8;
  let fitted = o.fitted ?? false;
  // Synchronous learners (XGBoost) are ready at once: a pretrained model guides the first proposal.
  const refit = (): void | Promise<void> => {
    if (history.length < minSamples) return;
    const done = o.regressor.fit(
      o.features(history.map((s) => s.candidate)),
      throughputTargets(history),
    );
    if (done instanceof Promise) return done.then(() => void (fitted = true));
    fitted = true;
  };
  let ready = refit();
  return {
    name: o.name ?? o.regressor.name,
    get samples() {
      return history.length;
    },
    async update(samples: Sample[]): Promise<void> {
      await ready;
      history.push(...samples);
      ready = refit();
      await ready;
    },
    predict(candidates: Candidate[]): number[] {
      if (!fitted || candidates.length === 0) return candidates.map(() => 0);
      const out = o.regressor.predict(o.features(candidates));
      if (out instanceof Promise) {
        throw new TypeError(
          `Regressor "${o.regressor.name}" predicts asynchronously; a cost model needs it synchronous`,
        );
      }
      return Array.from(out);
    },
  };
}
