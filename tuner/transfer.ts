/**
 * Generalisation across layers, as in the RL study (one DQN trained on the
 * first ResNet-18 layers walks to good configurations of later layers from
 * its first episode): one agent is trained in sequence over several spaces
 * of the same knobs (e.g. the conv2d layers of one network, or one kernel on
 * several devices), with a fresh {@link ScheduleEnv} per layer, and each
 * layer's learning curve (mean and max reward per episode) and tuning curve
 * (best time after each distinct measurement) are returned.
 *
 * The agent's shapes must fit every layer: the multi-step formulation (three
 * choices per knob) with the same number of knobs, and features of a fixed
 * length. The default reward is `"log-speedup"` relative to the layer's
 * optimum when it is known (replayed layers: 0 at the optimum, -ln 2 at half
 * its speed), else to the layer's first measurement, so rewards compare
 * across layers and across agents. Every layer's environment gets the same
 * seed, so a fresh agent on one layer sees the same random starts as the
 * agent trained in sequence.
 *
 * @example
 * ```ts
 * import { replayLayer, trainAcrossSpaces } from "./transfer.ts";
 * import { dqnAgent } from "../rl/dqn.ts";
 * const layers = await Promise.all(["convolution_A100", "convolution_A4000"].map((n) => replayLayer(n)));
 * const { agent, curves } = await trainAcrossSpaces(layers, (spec, seed) => dqnAgent(spec, { seed }), { episodes: 5 });
 * for (const c of curves) console.log(c.name, c.episodes.map((e) => e.meanReward.toFixed(2)).join(" "));
 * agent.dispose();
 * ```
 * @module
 */
import { checkArray, checkFunction, checkInteger, checkObject } from "../ir/check.ts";
import type { KnobSpace } from "../ir/knobs.ts";
import { replaySpaceFromFile } from "../search/replay.ts";
import type { CandidateOf } from "../search/strategy.ts";
import type { Agent, AgentSpec } from "../rl/agent.ts";
import { type Evaluator, ScheduleEnv, type ScheduleEnvOptions } from "../rl/env.ts";
import { type EpisodeStats, trainAgent, type TuningTrace } from "./train.ts";

/** One layer: a space and how to measure it. */
export interface Layer {
  /** Name in curves, e.g. `"1-64-56-56-64-64-3-3"`. */
  name: string;
  /** The layer's knob space. */
  space: KnobSpace;
  /** Measures a configuration of it. */
  evaluate: Evaluator;
  /** Turns a knob point into a candidate. Default `{ knobs }`. */
  candidateOf?: CandidateOf;
  /** Best known seconds (replay), for fractions of optimum. */
  optimum?: number;
}

/** Opens a Kernel Tuner cache (a shared name or a path) as a replayed {@link Layer}. */
export async function replayLayer(pathOrName: string, name?: string): Promise<Layer> {
  const r = await replaySpaceFromFile(pathOrName);
  return {
    name: name ?? r.name,
    space: r.space,
    evaluate: (cs) => r.measure(cs),
    candidateOf: r.candidateOf,
    optimum: r.optimum,
  };
}

/** Options of {@link trainAcrossSpaces}. */
export interface TransferOptions {
  /** Episodes per layer. */
  episodes: number;
  /** Distinct measurements per layer at most. Default Infinity. */
  maxSamples?: number;
  /**
   * Environment options (every layer). Default: multi-step, horizon 20,
   * random starts, log-speedup reward relative to the layer's optimum.
   */
  env?: Omit<ScheduleEnvOptions, "candidateOf" | "seed" | "cache">;
  /** Seed of the agent and of every layer's environment. Default 0. */
  seed?: number;
  /** Ask the agent to avoid measured configurations (see `agentStrategy`). Default false. */
  avoidRevisits?: boolean;
}

/** Curves of one layer. */
export interface LayerCurve {
  /** The layer's name. */
  name: string;
  /** Mean and max reward (and samples, best time) after each episode. */
  episodes: EpisodeStats[];
  /** Best time after each distinct measurement. */
  tuning: TuningTrace;
  /** The layer's best known seconds, when known. */
  optimum?: number;
}

/**
 * Trains one agent over the layers in order; returns it (the caller disposes
 * it) and each layer's curves. A RangeError when a layer's shapes differ from
 * the first layer's.
 */
export async function trainAcrossSpaces(
  layers: readonly Layer[],
  makeAgent: (spec: AgentSpec, seed: number) => Agent,
  o: TransferOptions,
): Promise<{ agent: Agent; curves: LayerCurve[] }> {
  checkArray(layers, "layers", "layers ({ name, space, evaluate }, e.g. replayLayer(name))");
  checkFunction(makeAgent, "makeAgent");
  checkObject(o, "trainAcrossSpaces options");
  checkInteger(o.episodes, "episodes", { min: 1 });
  if (layers.length === 0) throw new RangeError("trainAcrossSpaces needs at least one layer");
  const seed = o.seed ?? 0;
  const envs = layers.map((l) =>
    new ScheduleEnv(l.space, l.evaluate, {
      reward: "log-speedup",
      reference: l.optimum,
      ...o.env,
      candidateOf: l.candidateOf,
      seed,
    })
  );
  const spec: AgentSpec = {
    observationSize: envs[0].observationSize,
    actionSizes: envs[0].actionSpace.sizes,
  };
  envs.forEach((env, i) => {
    if (
      env.observationSize !== spec.observationSize ||
      env.actionSpace.sizes.join() !== spec.actionSizes.join()
    ) {
      throw new RangeError(
        `Layer "${layers[i].name}" has observations of ${env.observationSize} and actions ${
          JSON.stringify(env.actionSpace.sizes)
        }; the first layer has ${spec.observationSize} and ${JSON.stringify(spec.actionSizes)}`,
      );
    }
  });
  const agent = makeAgent(spec, seed);
  const curves: LayerCurve[] = [];
  for (let i = 0; i < layers.length; i++) {
    const env = envs[i];
    const avoid = o.avoidRevisits
      ? (choices: readonly number[]) => {
        const p = env.destination(choices.map((c) => c + env.actionSpace.start));
        return !env.space.isValid(p) || env.cache.has(env.space.index(p));
      }
      : undefined;
    const { episodes, tuning } = await trainAgent(env, agent, {
      episodes: o.episodes,
      maxSamples: o.maxSamples,
      avoid,
    });
    curves.push({ name: layers[i].name, episodes, tuning, optimum: layers[i].optimum });
  }
  return { agent, curves };
}
