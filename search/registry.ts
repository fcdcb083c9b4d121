/**
 * Strategies by name, as `compare` and `tune` accept them, each built over a
 * knob space with a seed.
 * @module
 */
import type { CostModel } from "../costmodel/model.ts";
import { randomModel } from "../costmodel/random_model.ts";
import { simulatedAnnealing } from "./annealing.ts";
import { evolutionarySearch } from "./evolutionary.ts";
import { geneticAlgorithm } from "./genetic.ts";
import { gridSearch } from "./grid.ts";
import type { KnobSpace } from "./knobs.ts";
import { randomKnobSearch } from "./random.ts";
import type { CandidateOf, Strategy } from "./strategy.ts";

/** What every strategy factory receives. */
export interface StrategyContext {
  seed: number;
  candidateOf?: CandidateOf;
  /** Cost model of model-based strategies. Default: a random model with the same seed. */
  model?: CostModel;
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
};

/** Names of the knob-space strategies. */
export const STRATEGY_NAMES: readonly string[] = Object.keys(KNOB_STRATEGIES);

/** Builds a strategy by name; an unknown name is a RangeError listing the known ones. */
export function createStrategy(name: string, space: KnobSpace, c: StrategyContext): Strategy {
  const f = Object.hasOwn(KNOB_STRATEGIES, name) ? KNOB_STRATEGIES[name] : undefined;
  if (!f) throw new RangeError(`Unknown strategy "${name}"; known: ${STRATEGY_NAMES.join(", ")}`);
  return f(space, c);
}
