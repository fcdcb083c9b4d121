/**
 * Reinforcement learning for schedules: the scheduling environment, agents
 * (random, PPO, DQN, bandits), episodes and agents as strategies.
 *
 * @example
 * ```ts
 * import { RL_STRATEGY_NAMES } from "./mod.ts";
 * console.log(RL_STRATEGY_NAMES);
 * ```
 * @module
 */
export {
  type ActionSpace,
  type EnvObservation,
  type FeatureKind as EnvFeatureKind,
  type Formulation,
  type Measurement,
  type PendingStep,
  type RewardKind,
  ScheduleEnv,
  type ScheduleEnvOptions,
  type StartPolicy,
  type StepInfo,
  type StepResult,
} from "./env.ts";
export {
  type ActOptions,
  type Agent,
  type AgentSpec,
  randomAgent,
  type Transition,
} from "./agent.ts";
export { type PPOAgent, ppoAgent, type PPOOptions } from "./ppo.ts";
export { type DQNAgent, dqnAgent, type DQNOptions } from "./dqn.ts";
export { type LinUCBAgent, linUCBAgent, type LinUCBOptions, ppoBandit } from "./bandit.ts";
export {
  type Episode,
  type EpisodeOptions,
  type EpisodeStats,
  runEpisode,
  type TrainOptions,
  type TuningTrace,
} from "./train.ts";
export { type AgentStrategy, agentStrategy, type AgentStrategyOptions } from "./strategy.ts";
export { RL_STRATEGY_NAMES, rlStrategy } from "./presets.ts";
// Types that the signatures above name.
export type { RLPresetContext } from "./presets.ts";
export type { RandomAgentOptions } from "./agent.ts";
