/**
 * The protocol every reinforcement-learning agent implements, so that any
 * agent (PPO, DQN, the bandits, or your own from a notebook) runs on a
 * {@link ScheduleEnv}, inside `compare` through {@link agentStrategy}, and
 * across layers through `trainAcrossSpaces`.
 *
 * Agents act on *choices*: component i of an action is an integer in
 * `[0, actionSizes[i])` (the environment adds its `actionSpace.start`).
 *
 * @example A random agent, and the loop that drives any agent
 * ```ts
 * import { randomAgent } from "./agent.ts";
 * import { runEpisode } from "./train.ts";
 * import { ScheduleEnv } from "./env.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [1, 2, 3, 4] }]);
 * const env = new ScheduleEnv(space, (cs) => cs.map((c) => ({ candidate: c, errorKind: "none", seconds: c.knobs![0] + 1 })));
 * const agent = randomAgent({ observationSize: env.observationSize, actionSizes: env.actionSpace.sizes }, { seed: 1 });
 * const { rewards } = await runEpisode(env, agent);
 * if (rewards.length !== 20) throw new Error();
 * ```
 * @module
 */
import { createPrng } from "../ir/prng.ts";
import { checkObject, described } from "../ir/check.ts";

/** The shapes an agent is built for. */
export interface AgentSpec {
  /** Length of every observation. */
  observationSize: number;
  /** Choices per action component (e.g. 3 per knob in the multi-step formulation). */
  actionSizes: readonly number[];
}

/** One step of experience. */
export interface Transition {
  /** The observation the action was chosen in. */
  observation: Float32Array;
  /** The choices taken (each in `[0, actionSizes[i])`). */
  action: readonly number[];
  /** Reward received for the step. */
  reward: number;
  /** The observation after the step. */
  next: Float32Array;
  /** True when the episode ended with this step. */
  done: boolean;
}

/** Options of {@link Agent.act}. */
export interface ActOptions {
  /** The most likely (highest-valued) action, no exploration. Default false. */
  greedy?: boolean;
  /**
   * Actions to avoid if the agent can (e.g. those that lead to a
   * configuration measured already): the agent tries other actions of its
   * own distribution (a bounded number of tries) and returns its first
   * choice when all are avoided. Default: none avoided.
   */
  avoid?: (action: readonly number[]) => boolean;
}

/** A learning agent. */
export interface Agent {
  /** Name in tables, e.g. `"ppo"`. */
  readonly name: string;
  /** The shapes it was built for. */
  readonly spec: AgentSpec;
  /**
   * Chooses an action (sampled, or epsilon-greedy); learns nothing. See
   * {@link ActOptions} for greedy actions and actions to avoid.
   */
  act(observation: Float32Array, options?: ActOptions): number[];
  /**
   * Learns from a transition (its own last action, as on-policy agents
   * assume). Updates happen inside when the agent's schedule says so.
   */
  learn(transition: Transition): void;
  /** Frees the agent's tensors; the agent is unusable afterwards. */
  dispose(): void;
}

/** Options of {@link randomAgent}. */
export interface RandomAgentOptions {
  /** Seed of the choices. Default 0. */
  seed?: number;
}

/**
 * Throws a TypeError naming `spec` unless it is an {@link AgentSpec} (an
 * environment's `observationSize` and `actionSpace.sizes`), and `options`
 * unless it is an object of options.
 *
 * @example
 * ```ts
 * import { checkAgentSpec } from "./agent.ts";
 * checkAgentSpec({ observationSize: 4, actionSizes: [3, 3] }, {});
 * try {
 *   checkAgentSpec(undefined as never, {});
 *   throw new Error("accepted");
 * } catch (e) {
 *   if (!(e instanceof TypeError) || !/^spec must be an agent spec/.test(e.message)) throw e;
 * }
 * ```
 */
export function checkAgentSpec(spec: AgentSpec, options: unknown): void {
  const s = spec as Partial<AgentSpec> | undefined;
  if (
    typeof s !== "object" || s === null || !Number.isInteger(s.observationSize) ||
    !Array.isArray(s.actionSizes) || !s.actionSizes.every((n) => Number.isInteger(n) && n >= 1)
  ) {
    throw new TypeError(
      `spec must be an agent spec ({ observationSize, actionSizes }: an environment's ` +
        `observationSize and actionSpace.sizes), got ${described(spec)}`,
    );
  }
  checkObject(options, "agent options");
}

/** An agent that picks uniformly random actions and learns nothing (a baseline). */
export function randomAgent(spec: AgentSpec, options: RandomAgentOptions = {}): Agent {
  checkAgentSpec(spec, options);
  const prng = createPrng(options.seed ?? 0);
  return {
    name: "random-agent",
    spec,
    act: () => spec.actionSizes.map((n) => prng.int(n)),
    learn: () => {},
    dispose: () => {},
  };
}

/** Checks that an observation has the size an agent was built for. */
export function checkObservation(spec: AgentSpec, observation: Float32Array): void {
  if (observation.length !== spec.observationSize) {
    throw new RangeError(
      `Observation of length ${observation.length}; the agent was built for ${spec.observationSize}`,
    );
  }
}
