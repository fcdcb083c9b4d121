/**
 * The one strategy table: every name `tune`, `compare`, the notebooks and the
 * benchmarks accept, each one algorithm everywhere, with what it searches and
 * what it needs. The help texts of `tune` and `compare` list it from here
 * ({@link strategyHelp}).
 *
 * Two kinds of space: a **knob space** (an AutoTVM knob template, or a Kernel
 * Tuner cache replayed) and a **trace space** (the sketches of a workload, as
 * Ansor and MetaSchedule generate them). `random` samples either; `ansor` (the
 * Ansor / MetaSchedule evolutionary search over sketches, population 128)
 * searches only traces; every other name searches only knob spaces
 * (`evolutionary` is MetaSchedule's evolutionary search over knob points,
 * population 512).
 *
 * Factories are asynchronous: those of the strategies that need tfjs (`mlp`,
 * the RL agents) import their modules when called, so choosing `random` loads
 * no tfjs.
 *
 * @example
 * ```ts
 * import { createStrategy, STRATEGY_NAMES } from "./strategies.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [1, 2, 3, 4] }]);
 * const s = await createStrategy("sa", space, { seed: 1 });
 * if (s.propose(2).length === 0 || !STRATEGY_NAMES.includes("ansor")) throw new Error();
 * ```
 * @module
 */
import type { CostModel, Sample } from "../costmodel/model.ts";
import { knobFeaturizer } from "../costmodel/featurizers.ts";
import { type Featurizer, learnedModel } from "../costmodel/learned.ts";
import { XGBoostRegressor } from "../costmodel/xgboost.ts";
import { randomModel } from "../costmodel/random_model.ts";
import type { KnobSpace } from "../ir/knobs.ts";
import { described } from "../ir/check.ts";
import { aucBandit } from "../search/auto.ts";
import { simulatedAnnealing } from "../search/annealing.ts";
import { basinHopping } from "../search/basin_hopping.ts";
import { bayesianOptimization } from "../search/bo.ts";
import { differentialEvolution } from "../search/diff_evo.ts";
import { dualAnnealing } from "../search/dual_annealing.ts";
import { evolutionarySearch } from "../search/evolutionary.ts";
import { evolutionaryTraceSearch } from "../search/evolutionary_traces.ts";
import { geneticAlgorithm } from "../search/genetic.ts";
import { greedyIls } from "../search/greedy_ils.ts";
import { gridSearch } from "../search/grid.ts";
import { modelBasedTuner } from "../search/model_based.ts";
import { particleSwarm } from "../search/pso.ts";
import { randomKnobSearch, randomSearch } from "../search/random.ts";
import type { DesignSpace } from "../search/space.ts";
import type { CandidateOf, Strategy } from "../search/strategy.ts";
import { validityClassifier } from "../search/validity.ts";
import { DEFAULTS } from "../ir/defaults.ts";

/** What every knob-space factory receives. */
export interface StrategyContext {
  /** Seed of the strategy. */
  seed: number;
  /** Turns a knob point into a candidate (a template adds its trace). Default `{ knobs }`. */
  candidateOf?: CandidateOf;
  /** Cost model of `evolutionary`. Default: a random model with the same seed. */
  model?: CostModel;
  /** Features of candidates for the learned models. Default: knob features of the space. */
  features?: Featurizer;
  /** Samples to pretrain learned models on (the `-transfer` variants need them). Default none. */
  pretrain?: Sample[];
  /** Members of the `auto` portfolio (table names). Default {@link AUTO_MEMBERS}. */
  autoMembers?: readonly string[];
  /** Plan size of the model-based tuners (AutoTVM's plan_size). Default `DEFAULTS.planSize`. */
  planSize?: number;
  /**
   * Settings of the strategy's declared hyperparameters ({@link StrategyEntry.hyper}),
   * e.g. a preset's; the rest keep their defaults. Checked by {@link checkHyper}.
   */
  hyper?: Readonly<Record<string, number | string>>;
  /**
   * `sa`: relative lead below which a newcomer waits for the incumbent to be
   * timed again (`remeasureMargin` of search/annealing.ts). Default 0: never.
   */
  remeasureMargin?: number;
}

/** A strategy's hyperparameter: the values a tuner may set it to, and its default. */
export interface Hyperparameter {
  /** The option of the strategy's factory it sets (e.g. `alpha`). */
  name: string;
  /** What it does. */
  about: string;
  /** The values searched (the range, as a grid, as Kernel Tuner's hyperparameter tuning has it). */
  values: readonly (number | string)[];
  /** The strategy's default (one of `values`). */
  default: number | string;
}

/** One row of the table. */
export interface StrategyEntry {
  /** One line for the help texts. */
  about: string;
  /** Needs records to pretrain on ({@link StrategyContext.pretrain}: `compare --transfer-from`). */
  pretrain?: boolean;
  /** Honours {@link StrategyContext.planSize} (`compare --plan-size`). */
  plans?: boolean;
  /** Loads tfjs when created. */
  tfjs?: boolean;
  /** Builds it over a knob space; absent for a trace-only strategy. */
  knobs?: (space: KnobSpace, c: StrategyContext) => Promise<Strategy>;
  /** Builds it over a trace space; absent for a knob-only strategy. */
  traces?: (space: DesignSpace, c: { seed: number }) => Strategy;
  /** Its hyperparameters, for `tune-strategy` (absent: none are declared). */
  hyper?: readonly Hyperparameter[];
}

function hp(
  name: string,
  about: string,
  values: readonly (number | string)[],
  def: number | string,
): Hyperparameter {
  return Object.freeze({ name, about, values: Object.freeze([...values]), default: def });
}

/** A learned model of a kind (`xgb`, `xgb-rank`, `mlp`) over a space's features. */
export async function learnedModelFor(
  kind: string,
  space: KnobSpace,
  c: StrategyContext,
): Promise<CostModel> {
  const regressor = kind === "mlp"
    ? new (await import("../costmodel/mlp.ts")).MLPRegressor({ seed: c.seed })
    : new XGBoostRegressor({
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
function modelBased(kind: string, transfer: boolean): StrategyEntry["knobs"] {
  return async (space, c) => {
    if (transfer && !c.pretrain?.length) {
      throw new RangeError(`Strategy "${kind}-transfer" needs records to pretrain on`);
    }
    return modelBasedTuner(space, {
      ...c,
      // Plans of 16 (AutoTVM uses 64): the model leads from the 17th evaluation on.
      planSize: c.planSize ?? DEFAULTS.planSize,
      validity: validityClassifier(space),
      model: await learnedModelFor(kind, space, transfer ? c : { ...c, pretrain: undefined }),
      warmStart: transfer,
      name: transfer ? `${kind}-transfer` : kind,
    });
  };
}

/** An RL strategy with its preset settings (rl/presets.ts, imported with tfjs on first use). */
function rl(name: string): StrategyEntry["knobs"] {
  return async (space, c) => (await import("../rl/presets.ts")).rlStrategy(name, space, c);
}

/** Points of a knob space its `isValid` accepts (counted up to 2^20 points, else its size). */
function allowedPoints(space: KnobSpace): number {
  if (space.size > 2 ** 20) return space.size;
  let n = 0;
  for (let i = 0; i < space.size; i++) if (space.isValid(space.point(i))) n++;
  return n;
}

/** A strategy that proposes at most `limit` candidates in all, then nothing. */
function capped(s: Strategy, limit: number): Strategy {
  let left = limit;
  return {
    name: s.name,
    propose(n) {
      const out = s.propose(Math.min(n, left));
      left -= out.length;
      return out;
    },
    observe: (o) => s.observe(o),
  };
}

/** A synchronous knob factory as an asynchronous one. */
function now(f: (space: KnobSpace, c: StrategyContext) => Strategy): StrategyEntry["knobs"] {
  return (space, c) => Promise.resolve(f(space, c));
}

/** The strategy table. */
export const STRATEGIES: Readonly<Record<string, Readonly<StrategyEntry>>> = Object.freeze({
  random: {
    about: "uniform random sampling of the space (knobs or sketches)",
    knobs: now((space, c) => {
      const s = randomKnobSearch(space, c);
      const f = c.hyper?.fraction;
      return typeof f === "number" && f < 1 ? capped(s, Math.ceil(f * allowedPoints(space))) : s;
    }),
    traces: (space, c) => randomSearch(space, c),
    hyper: [
      hp(
        "fraction",
        "stop after this fraction of the allowed points (Kernel Tuner's random_sample: 0.1)",
        [0.05, 0.1, 0.2, 0.5, 1],
        1,
      ),
    ],
  },
  grid: {
    about: "every point in index order",
    knobs: now((space, c) => gridSearch(space, { ...c, order: "index" })),
  },
  "grid-shuffled": {
    about: "every point in a shuffled order",
    knobs: now((space, c) => gridSearch(space, { ...c, order: "shuffled" })),
  },
  sa: {
    about: "simulated annealing (Kernel Tuner's defaults)",
    knobs: now((space, c) => simulatedAnnealing(space, { ...c, ...c.hyper })),
    hyper: [
      hp("t0", "starting temperature (Kernel Tuner's T)", [0.5, 1, 1.5], 1),
      hp("tMin", "restart temperature (T_min)", [0.0001, 0.001, 0.01], 0.001),
      hp("alpha", "temperature factor per evaluation", [0.99, 0.995, 0.9975], 0.995),
      hp("maxStuck", "moves over measured neighbours before a restart", [25, 100, 400], 100),
      hp("init", "random points measured first", [5, 10, 20], 10),
    ],
  },
  ga: {
    about: "AutoTVM's genetic algorithm (generations of 16)",
    knobs: now((space, c) => geneticAlgorithm(space, { ...c, populationSize: 16, ...c.hyper })),
    hyper: [
      hp("populationSize", "points per generation", [8, 16, 32, 64], 16),
      hp("eliteNum", "best points carried to the next parents", [1, 3, 6], 3),
      hp("mutationProb", "probability of a random knob in a child", [0.05, 0.1, 0.2], 0.1),
    ],
  },
  evolutionary: {
    about: "MetaSchedule's evolutionary search over knob points (population 512, cost model)",
    knobs: now((space, c) =>
      evolutionarySearch(space, { ...c, model: c.model ?? randomModel(c.seed) })
    ),
  },
  ansor: {
    about: "Ansor's evolutionary search over sketches (traces; population 128)",
    traces: (space, c) => evolutionaryTraceSearch(space, c),
  },
  xgb: {
    about: "AutoTVM's XGBTuner (regression)",
    plans: true,
    knobs: modelBased("xgb", false),
  },
  "xgb-rank": {
    about: "AutoTVM's XGBTuner (pairwise rank)",
    plans: true,
    knobs: modelBased("xgb-rank", false),
  },
  mlp: {
    about: "the model-based tuner with a tfjs MLP",
    plans: true,
    tfjs: true,
    knobs: modelBased("mlp", false),
  },
  "evolutionary-xgb": {
    about: "evolutionary with an XGBoost model and a validity classifier",
    knobs: async (space, c) =>
      evolutionarySearch(space, {
        ...c,
        validity: validityClassifier(space),
        model: await learnedModelFor("xgb", space, { ...c, pretrain: undefined }),
      }),
  },
  "xgb-transfer": {
    about: "xgb pretrained on another device's records",
    pretrain: true,
    plans: true,
    knobs: modelBased("xgb", true),
  },
  "xgb-rank-transfer": {
    about: "xgb-rank pretrained on another device's records",
    pretrain: true,
    plans: true,
    knobs: modelBased("xgb-rank", true),
  },
  // Reinforcement learning (rl/presets.ts): walks of the multi-step formulation and bandits.
  ppo: { about: "PPO walking the knob indices (RL, tfjs)", tfjs: true, knobs: rl("ppo") },
  dqn: { about: "DQN walking the knob indices (RL, tfjs)", tfjs: true, knobs: rl("dqn") },
  bandit: { about: "contextual bandit (PPO, gamma 0; tfjs)", tfjs: true, knobs: rl("bandit") },
  "bandit-linucb": {
    about: "LinUCB bandit (rl/ loads tfjs)",
    tfjs: true,
    knobs: rl("bandit-linucb"),
  },
  // The field's baselines, as Kernel Tuner names them (discrete analogues on knob indices).
  basin_hopping: {
    about: "basin hopping (Kernel Tuner)",
    knobs: now((space, c) => basinHopping(space, c)),
  },
  dual_annealing: {
    about: "dual annealing (Kernel Tuner)",
    knobs: now((space, c) => dualAnnealing(space, c)),
  },
  greedy_ils: {
    about: "greedy iterated local search (Kernel Tuner)",
    knobs: now((space, c) => greedyIls(space, c)),
  },
  diff_evo: {
    about: "differential evolution (Kernel Tuner)",
    knobs: now((space, c) => differentialEvolution(space, { ...c, ...c.hyper })),
    hyper: [
      hp("populationSize", "members of the population", [5, 10, 20], 10),
      hp("crossover", "crossover rate CR", [0.5, 0.7, 0.9], 0.7),
    ],
  },
  pso: {
    about: "particle swarm optimization (Kernel Tuner)",
    knobs: now((space, c) => particleSwarm(space, { ...c, ...c.hyper })),
    hyper: [
      hp("swarmSize", "particles", [5, 10, 20, 30], 10),
      hp("w", "inertia", [0.5, 0.7, 0.9], 0.9),
      hp("c1", "pull towards the particle's best", [1, 2, 3], 2),
      hp("c2", "pull towards the swarm's best", [0.5, 1, 1.5], 1),
    ],
  },
  // Bayesian optimization: a Gaussian process with expected improvement (or another acquisition).
  bo: {
    about: "Bayesian optimization (GP, acquisitions EI/POI/LCB in turn)",
    knobs: now((space, c) => bayesianOptimization(space, c)),
  },
  "bo-ei": {
    about: "Bayesian optimization with EI alone",
    knobs: now((space, c) =>
      bayesianOptimization(space, { ...c, acquisition: "ei", name: "bo-ei" })
    ),
  },
  // Log costs above the lower quartile clipped: fixes bo on resnet18_conv1_cpu, weaker elsewhere.
  "bo-clip": {
    about: "bo with log costs above the lower quartile clipped",
    knobs: now((space, c) =>
      bayesianOptimization(space, { ...c, clipQuantile: 0.25, name: "bo-clip" })
    ),
  },
  // A portfolio: OpenTuner's AUC bandit shares the evaluations among members (search/auto.ts).
  auto: {
    about: "OpenTuner's AUC bandit over bo, sa, diff_evo and greedy_ils",
    knobs: async (space, c) =>
      aucBandit(space, {
        ...c,
        members: await Promise.all(
          (c.autoMembers ?? AUTO_MEMBERS).map((m, k) =>
            createStrategy(m, space, { ...c, hyper: undefined, seed: c.seed * 8 + k })
          ),
        ),
      }),
  },
});

/** Members of the `auto` portfolio. */
export const AUTO_MEMBERS: readonly string[] = ["bo", "sa", "diff_evo", "greedy_ils"];

/** Every name of the table, in its order. */
export const STRATEGY_NAMES: readonly string[] = Object.keys(STRATEGIES);

/** Names that search knob spaces (what `compare` accepts). */
export const KNOB_STRATEGY_NAMES: readonly string[] = STRATEGY_NAMES.filter((n) =>
  STRATEGIES[n].knobs
);

/** Names that search trace spaces. */
export const TRACE_STRATEGY_NAMES: readonly string[] = STRATEGY_NAMES.filter((n) =>
  STRATEGIES[n].traces
);

/** Strategies that need records to pretrain on (`compare --transfer-from`). */
export const TRANSFER_STRATEGIES: readonly string[] = STRATEGY_NAMES.filter((n) =>
  STRATEGIES[n].pretrain
);

/** The table's row of a name; an unknown name is a RangeError listing the known ones. */
export function strategyEntry(name: string): Readonly<StrategyEntry> {
  const e = Object.hasOwn(STRATEGIES, name) ? STRATEGIES[name] : undefined;
  if (!e) throw new RangeError(`Unknown strategy "${name}"; known: ${STRATEGY_NAMES.join(", ")}`);
  return e;
}

/**
 * Checks settings of a strategy's hyperparameters: every name declared in its
 * table row, every value one of the declared values.
 *
 * @example
 * ```ts
 * import { checkHyper } from "./strategies.ts";
 * checkHyper("sa", { alpha: 0.99 });
 * let refused = false;
 * try {
 *   checkHyper("sa", { popsize: 3 });
 * } catch (e) {
 *   refused = e instanceof RangeError;
 * }
 * if (!refused) throw new Error();
 * ```
 * @throws {RangeError} naming the strategy, the hyperparameter and the value
 */
export function checkHyper(name: string, hyper: Readonly<Record<string, unknown>>): void {
  const declared = strategyEntry(name).hyper ?? [];
  for (const [k, v] of Object.entries(hyper)) {
    const h = declared.find((d) => d.name === k);
    if (!h) {
      throw new RangeError(
        `Strategy "${name}" has no hyperparameter "${k}"; declared: ${
          declared.map((d) => d.name).join(", ") || "none"
        }`,
      );
    }
    if (!h.values.includes(v as number | string)) {
      throw new RangeError(
        `Hyperparameter ${name}.${k} must be one of ${h.values.join(", ")}, got ${
          JSON.stringify(v)
        }`,
      );
    }
  }
}

/** Builds a strategy by name over a knob space; a trace-only or unknown name is a RangeError. */
export async function createStrategy(
  name: string,
  space: KnobSpace,
  c: StrategyContext,
): Promise<Strategy> {
  const e = strategyEntry(name);
  if (
    typeof space !== "object" || space === null || typeof space.size !== "number" ||
    typeof space.point !== "function"
  ) {
    throw new TypeError(
      `space must be a knob space (openSpace(...).space, templateSpace(...).space), got ${
        described(space)
      }`,
    );
  }
  if (typeof c !== "object" || c === null || !Number.isInteger(c.seed)) {
    throw new TypeError(`context must be { seed: integer, ... }, got ${described(c)}`);
  }
  if (c.hyper) checkHyper(name, c.hyper);
  if (!e.knobs) {
    throw new RangeError(
      `Strategy "${name}" searches sketches (traces), not a knob space; knob strategies: ${
        KNOB_STRATEGY_NAMES.join(", ")
      }`,
    );
  }
  return await e.knobs(space, c);
}

/** Builds a strategy by name over a trace space; a knob-only or unknown name is a RangeError. */
export function createTraceStrategy(
  name: string,
  space: DesignSpace,
  c: { seed: number },
): Strategy {
  const e = strategyEntry(name);
  if (!e.traces) {
    throw new RangeError(
      `Strategy "${name}" searches a knob space, not sketches; trace strategies: ${
        TRACE_STRATEGY_NAMES.join(", ")
      }`,
    );
  }
  return e.traces(space, c);
}

/**
 * The table as help text: one line per name with what it is, indented by
 * `indent` spaces.
 *
 * @example
 * ```ts
 * import { strategyHelp } from "./strategies.ts";
 * if (!/^ {2}ansor +Ansor's/m.test(strategyHelp(2))) throw new Error();
 * ```
 */
export function strategyHelp(indent = 0, names: readonly string[] = STRATEGY_NAMES): string {
  const width = Math.max(...names.map((n) => n.length)) + 2;
  return names.map((n) => `${" ".repeat(indent)}${n.padEnd(width)}${STRATEGIES[n].about}`)
    .join("\n");
}
