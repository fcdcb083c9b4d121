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
import { basinHopping } from "./basin_hopping.ts";
import { differentialEvolution } from "./diff_evo.ts";
import { dualAnnealing } from "./dual_annealing.ts";
import { greedyIls } from "./greedy_ils.ts";
import { particleSwarm } from "./pso.ts";
import { bayesianOptimization } from "./bo.ts";
import { aucBandit } from "./auto.ts";
import { validityClassifier } from "./validity.ts";

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
  /** Members of the `auto` portfolio (registry names). Default {@link AUTO_MEMBERS}. */
  autoMembers?: readonly string[];
  /** Plan size of the model-based tuners (AutoTVM's plan_size). Default 16 (small budgets). */
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
      // Plans of 16 (AutoTVM uses 64): the model leads from the 17th evaluation on.
      planSize: c.planSize ?? 16,
      validity: validityClassifier(space),
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
  // Generations of 16 (AutoTVM uses 100), so that selection starts within small budgets.
  ga: (space, c) => geneticAlgorithm(space, { ...c, populationSize: 16 }),
  evolutionary: (space, c) =>
    evolutionarySearch(space, { ...c, model: c.model ?? randomModel(c.seed) }),
  xgb: modelBased("xgb", false),
  "xgb-rank": modelBased("xgb-rank", false),
  mlp: modelBased("mlp", false),
  "evolutionary-xgb": (space, c) =>
    evolutionarySearch(space, {
      ...c,
      validity: validityClassifier(space),
      model: learnedModelFor("xgb", space, { ...c, pretrain: undefined }),
    }),
  "xgb-transfer": modelBased("xgb", true),
  "xgb-rank-transfer": modelBased("xgb-rank", true),
  // Reinforcement learning (rl/presets.ts): walks of the multi-step formulation and bandits.
  ppo: rl("ppo"),
  dqn: rl("dqn"),
  bandit: rl("bandit"),
  "bandit-linucb": rl("bandit-linucb"),
  // The field's baselines, as Kernel Tuner names them (discrete analogues on knob indices).
  basin_hopping: (space, c) => basinHopping(space, c),
  dual_annealing: (space, c) => dualAnnealing(space, c),
  greedy_ils: (space, c) => greedyIls(space, c),
  diff_evo: (space, c) => differentialEvolution(space, c),
  pso: (space, c) => particleSwarm(space, c),
  // Bayesian optimization: a Gaussian process with expected improvement (or another acquisition).
  bo: (space, c) => bayesianOptimization(space, c),
  "bo-ei": (space, c) => bayesianOptimization(space, { ...c, acquisition: "ei", name: "bo-ei" }),
  // Log costs above the lower quartile clipped: fixes bo on resnet18_conv1_cpu, weaker elsewhere.
  "bo-clip": (space, c) =>
    bayesianOptimization(space, { ...c, clipQuantile: 0.25, name: "bo-clip" }),
  // A portfolio: OpenTuner's AUC bandit shares the evaluations among members (search/auto.ts).
  auto: (space, c) =>
    aucBandit(space, {
      ...c,
      members: (c.autoMembers ?? AUTO_MEMBERS).map((m, k) =>
        createStrategy(m, space, { ...c, seed: c.seed * 8 + k })
      ),
    }),
};

/** Members of the `auto` portfolio. */
export const AUTO_MEMBERS: readonly string[] = ["bo", "sa", "diff_evo", "greedy_ils"];

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
