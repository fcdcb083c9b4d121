/**
 * Strategies by name, as `compare` and `tune` accept them, each built over a
 * knob space with a seed.
 * @module
 */
import type { CostModel, Sample } from "../costmodel/model.ts";
import { knobFeaturizer } from "../costmodel/featurizers.ts";
import { type Featurizer, learnedModel } from "../costmodel/learned.ts";
import { MLPRegressor } from "../costmodel/mlp.ts";
import { XGBoostRegressor } from "../costmodel/xgboost.ts";
import { modelBasedTuner } from "./model_based.ts";
import { randomModel } from "../costmodel/random_model.ts";
import { simulatedAnnealing } from "./annealing.ts";
import { evolutionarySearch } from "./evolutionary.ts";
import { geneticAlgorithm } from "./genetic.ts";
import { gridSearch } from "./grid.ts";
import type { KnobSpace } from "./knobs.ts";
import { randomKnobSearch } from "./random.ts";
import type { CandidateOf, Strategy } from "./strategy.ts";
import { rlStrategy } from "../rl/presets.ts";

/** What every strategy factory receives. */
export interface StrategyContext {
  seed: number;
  candidateOf?: CandidateOf;
  /** Cost model of `evolutionary`. Default: a random model with the same seed. */
  model?: CostModel;
  /** Features of candidates for the learned models. Default: knob features of the space. */
  features?: Featurizer;
  /** Samples to pretrain learned models on (the `-transfer` variants need them). */
  pretrain?: Sample[];
  /** Plan size of the model-based tuners (AutoTVM's plan_size). Default 64. */
  planSize?: number;
}

/** A learned model of a kind (`xgb`, `xgb-rank`, `mlp`) over a space's features. */
export function learnedModelFor(kind: string, space: KnobSpace, c: StrategyContext): CostModel {
  const regressor = kind === "mlp" ? new MLPRegressor({ seed: c.seed }) : new XGBoostRegressor({
    objective: kind === "xgb-rank" ? "rank:pairwise" : "reg:squarederror",
    seed: c.seed,
  });
  return learnedModel({
    name: kind,
    regressor,
    features: c.features ?? knobFeaturizer(space),
    pretrain: c.pretrain,
  });
}

/** AutoTVM's model-based tuner with a learned model; `transfer` pretrains it on `c.pretrain`. */
function modelBased(kind: string, transfer: boolean) {
  return (space: KnobSpace, c: StrategyContext): Strategy => {
    if (transfer && !c.pretrain?.length) {
      throw new RangeError(`Strategy "${kind}-transfer" needs records to pretrain on`);
    }
    return modelBasedTuner(space, {
      ...c,
      model: learnedModelFor(kind, space, transfer ? c : { ...c, pretrain: undefined }),
      warmStart: transfer,
      name: transfer ? `${kind}-transfer` : kind,
    });
  };
}

/** An RL strategy with its preset settings (rl/presets.ts). */
function rl(name: string) {
  return (space: KnobSpace, c: StrategyContext): Strategy => rlStrategy(name, space, c);
}

/** Factories of the knob-space strategies. */
export const KNOB_STRATEGIES: Record<string, (space: KnobSpace, c: StrategyContext) => Strategy> = {
  random: (space, c) => randomKnobSearch(space, c),
  grid: (space, c) => gridSearch(space, { ...c, order: "index" }),
  "grid-shuffled": (space, c) => gridSearch(space, { ...c, order: "shuffled" }),
  sa: (space, c) => simulatedAnnealing(space, c),
  ga: (space, c) => geneticAlgorithm(space, c),
  evolutionary: (space, c) =>
    evolutionarySearch(space, { ...c, model: c.model ?? randomModel(c.seed) }),
  xgb: modelBased("xgb", false),
  "xgb-rank": modelBased("xgb-rank", false),
  mlp: modelBased("mlp", false),
  "evolutionary-xgb": (space, c) =>
    evolutionarySearch(space, {
      ...c,
      model: learnedModelFor("xgb", space, { ...c, pretrain: undefined }),
    }),
  "xgb-transfer": modelBased("xgb", true),
  "xgb-rank-transfer": modelBased("xgb-rank", true),
  // Reinforcement learning (rl/presets.ts): walks of the multi-step formulation and bandits.
  ppo: rl("ppo"),
  dqn: rl("dqn"),
  bandit: rl("bandit"),
  "bandit-linucb": rl("bandit-linucb"),
};

/** Strategies that need records to pretrain on (`compare --transfer-from`). */
export const TRANSFER_STRATEGIES: readonly string[] = ["xgb-transfer", "xgb-rank-transfer"];

/** Names of the knob-space strategies. */
export const STRATEGY_NAMES: readonly string[] = Object.keys(KNOB_STRATEGIES);

/** Builds a strategy by name; an unknown name is a RangeError listing the known ones. */
export function createStrategy(name: string, space: KnobSpace, c: StrategyContext): Strategy {
  const f = Object.hasOwn(KNOB_STRATEGIES, name) ? KNOB_STRATEGIES[name] : undefined;
  if (!f) throw new RangeError(`Unknown strategy "${name}"; known: ${STRATEGY_NAMES.join(", ")}`);
  return f(space, c);
}
