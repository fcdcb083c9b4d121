/**
 * One episode of an agent on a {@link ScheduleEnv} ({@link runEpisode}, for
 * notebooks stepping by hand), and the types of a training run's curves.
 * Training over many episodes runs through the tuning loop: `trainAgent` of
 * `tuner/train.ts`.
 *
 * @example
 * ```ts
 * import { runEpisode } from "./train.ts";
 * import { ScheduleEnv } from "./env.ts";
 * import { ppoAgent } from "./ppo.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [1, 2, 3, 4, 5] }]);
 * const env = new ScheduleEnv(space, (cs) => cs.map((c) => ({ candidate: c, errorKind: "none", seconds: 1 + Math.abs(c.knobs![0] - 3) })), { reward: "log-speedup" });
 * const agent = ppoAgent({ observationSize: env.observationSize, actionSizes: env.actionSpace.sizes }, { seed: 1 });
 * const { rewards } = await runEpisode(env, agent);
 * console.log(rewards.length); // the horizon, 20
 * agent.dispose();
 * ```
 * @module
 */
import { checkObject, described } from "../ir/check.ts";
import type { ActOptions, Agent } from "./agent.ts";
import type { ScheduleEnv, StartPolicy, StepInfo, StepResult } from "./env.ts";
import type { Point } from "../ir/knobs.ts";

/** Options of {@link runEpisode}. */
export interface EpisodeOptions {
  /** Learn from the transitions. Default true. */
  learn?: boolean;
  /** Act greedily (no exploration). Default false. */
  greedy?: boolean;
  /** Start of the episode. Default: the environment's start policy. */
  start?: StartPolicy | Point;
  /** Actions the agent should avoid (see {@link ActOptions.avoid}). Default: none. */
  avoid?: ActOptions["avoid"];
}

/** One episode's rewards and step infos. */
export interface Episode {
  /** Reward of each step. */
  rewards: number[];
  /** Info of each step. */
  infos: StepInfo[];
}

/** Runs one episode (reset, then steps until done). */
export async function runEpisode(
  env: ScheduleEnv,
  agent: Agent,
  options: EpisodeOptions = {},
): Promise<Episode> {
  const e = env as Partial<ScheduleEnv> | undefined;
  if (typeof e !== "object" || e === null || typeof e.reset !== "function" || !e.actionSpace) {
    throw new TypeError(
      `env must be a ScheduleEnv (new ScheduleEnv(space, evaluate)), got ${described(env)}`,
    );
  }
  const a = agent as Partial<Agent> | undefined;
  if (typeof a !== "object" || a === null || typeof a.act !== "function" || !a.spec) {
    throw new TypeError(
      `agent must be an agent (randomAgent, ppoAgent, dqnAgent), got ${described(agent)}`,
    );
  }
  checkObject(options, "runEpisode options");
  checkAgentFits(env, agent);
  const { start } = env.actionSpace;
  let obs = env.reset(options.start);
  const rewards: number[] = [], infos: StepInfo[] = [];
  for (let done = false; !done;) {
    const choices = agent.act(obs, { greedy: options.greedy, avoid: options.avoid });
    const step = await env.step(choices.map((c) => c + start));
    if (options.learn ?? true) learnStep(agent, obs, choices, step);
    rewards.push(step.reward);
    infos.push(step.info);
    obs = step.observation;
    done = step.done;
  }
  return { rewards, infos };
}

/** Summary of one episode of a learning curve. */
export interface EpisodeStats {
  /** 0-based episode number. */
  episode: number;
  /** Mean reward of the episode's steps. */
  meanReward: number;
  /** Largest reward of the episode's steps. */
  maxReward: number;
  /** Distinct measurements after the episode. */
  samples: number;
  /** Best valid seconds measured after the episode (Infinity before the first). */
  best: number;
}

/** Best time after each distinct measurement (index i: after i + 1 samples). */
export interface TuningTrace {
  /** Distinct measurements made (index i: i + 1). */
  samples: number[];
  /** Best valid seconds after each distinct measurement (Infinity before the first valid one). */
  best: number[];
}

/** Options of `trainAgent` (tuner/train.ts). */
export interface TrainOptions extends Omit<EpisodeOptions, "start"> {
  /** Episodes to run. */
  episodes: number;
  /** Stop early once this many distinct configurations are measured. Default Infinity. */
  maxSamples?: number;
}

/**
 * Throws a RangeError naming both shapes when `agent` was built for other
 * observations or actions than `env` has.
 */
export function checkAgentFits(env: ScheduleEnv, agent: Agent): void {
  const { sizes } = env.actionSpace;
  if (
    agent.spec.observationSize !== env.observationSize || !sameSizes(agent.spec.actionSizes, sizes)
  ) {
    throw new RangeError(
      `Agent "${agent.name}" was built for observations of ${agent.spec.observationSize} and actions ${
        JSON.stringify(agent.spec.actionSizes)
      }; the environment has ${env.observationSize} and ${JSON.stringify(sizes)}`,
    );
  }
}

function sameSizes(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Tells `agent` the transition of one step: from `observation`, the action
 * `choices` led to `step` (its reward, next observation and end).
 *
 * @example
 * ```ts
 * import { learnStep } from "./train.ts";
 * import { randomAgent } from "./agent.ts";
 * const agent = randomAgent({ observationSize: 3, actionSizes: [2] });
 * learnStep(agent, new Float32Array(3), [1], {
 *   observation: new Float32Array(3),
 *   reward: 0.5,
 *   done: true,
 * });
 * ```
 */
export function learnStep(
  agent: Agent,
  observation: Float32Array,
  choices: number[],
  step: Pick<StepResult, "reward" | "observation" | "done">,
): void {
  agent.learn({
    observation,
    action: choices,
    reward: step.reward,
    next: step.observation,
    done: step.done,
  });
}
