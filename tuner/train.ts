/**
 * Training an RL agent on a {@link ScheduleEnv} through the tuning loop:
 * episodes of steps, each step's new configuration measured through a
 * {@link Measurer} and recorded in a {@link RecordStore} like any trial of
 * `tune` or `compare` (in memory unless a store is given, so a run can be
 * kept and resumed). The agent learns from every transition; the result is
 * the learning curve (mean and max reward of each episode) and the tuning
 * curve (best time after each distinct measurement).
 *
 * The loop sees the episodes as a strategy that proposes the one
 * configuration a step needs measured (a step to a configuration already
 * measured is free and taken at once, as `ScheduleEnv.step` takes it) and
 * proposes nothing once the episodes are done.
 *
 * @example
 * ```ts
 * import { trainAgent } from "./train.ts";
 * import { ScheduleEnv } from "../rl/env.ts";
 * import { ppoAgent } from "../rl/ppo.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [1, 2, 3, 4, 5] }]);
 * const env = new ScheduleEnv(space, (cs) => cs.map((c) => ({ candidate: c, errorKind: "none", seconds: 1 + Math.abs(c.knobs![0] - 3) })), { reward: "log-speedup" });
 * const agent = ppoAgent({ observationSize: env.observationSize, actionSizes: env.actionSpace.sizes }, { seed: 1 });
 * const { episodes, tuning } = await trainAgent(env, agent, { episodes: 3 });
 * console.log(episodes.map((e) => e.meanReward), tuning.best.at(-1));
 * agent.dispose();
 * ```
 * @module
 */
import type { Candidate, Observation } from "../ir/candidate.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import type { RecordStore } from "../datasets/record_store.ts";
import type { Measurer } from "../measure/measurer.ts";
import type { Agent } from "../rl/agent.ts";
import type { PendingStep, ScheduleEnv, StepInfo } from "../rl/env.ts";
import {
  checkAgentFits,
  type EpisodeStats,
  learnStep,
  type TrainOptions,
  type TuningTrace,
} from "../rl/train.ts";
import type { Strategy } from "../search/strategy.ts";
import { tune } from "./loop.ts";
import { evaluatorMeasurer, knobKey } from "./run_strategy.ts";

export type { EpisodeStats, TrainOptions, TuningTrace };

/** Where {@link trainAgent} measures and records. */
export interface TrainRecords {
  /** Measures the configurations. Default: the environment's evaluator. */
  measurer?: Measurer;
  /** Where the measurements are recorded. Default: a fresh in-memory store. */
  store?: RecordStore;
  /** Continue this run of `store`. Default: a new run named after the agent. */
  runId?: number;
}

/** Runs episodes through the tuning loop; returns the learning curve and the tuning curve. */
export async function trainAgent(
  env: ScheduleEnv,
  agent: Agent,
  options: TrainOptions & TrainRecords,
): Promise<{ episodes: EpisodeStats[]; tuning: TuningTrace }> {
  checkAgentFits(env, agent);
  const episodes: EpisodeStats[] = [];
  const tuning: TuningTrace = { samples: [], best: [] };
  let seen = env.samples;
  const { start } = env.actionSpace;
  const maxSamples = options.maxSamples ?? Infinity;

  /** The episode in progress: observation, rewards and infos so far. */
  let episode:
    | { obs: Float32Array; rewards: number[]; infos: StepInfo[]; done: boolean }
    | undefined;
  /** The step waiting for its measurement. */
  let waiting: { pending: PendingStep; obs: Float32Array; choices: number[] } | undefined;

  const finishStep = (
    obs: Float32Array,
    choices: number[],
    step: ReturnType<ScheduleEnv["commit"]>,
  ) => {
    if (options.learn ?? true) learnStep(agent, obs, choices, step);
    episode!.rewards.push(step.reward);
    episode!.infos.push(step.info);
    episode!.obs = step.observation;
    episode!.done = step.done;
  };
  const closeEpisode = () => {
    const { rewards, infos } = episode!;
    for (const info of infos) {
      if (info.samples > seen) {
        seen = info.samples;
        tuning.samples.push(info.samples);
        tuning.best.push(info.best);
      }
    }
    episodes.push({
      episode: episodes.length,
      meanReward: rewards.reduce((a, b) => a + b, 0) / rewards.length,
      maxReward: Math.max(...rewards),
      samples: env.samples,
      best: env.best.seconds,
    });
    episode = undefined;
  };

  /** Steps the episodes until a step needs a measurement (its candidate) or they are over. */
  const next = (): Candidate[] => {
    if (waiting) return [waiting.pending.candidate];
    for (;;) {
      if (episode?.done) closeEpisode();
      if (!episode) {
        if (episodes.length >= options.episodes || env.samples >= maxSamples) return [];
        episode = { obs: env.reset(), rewards: [], infos: [], done: false };
      }
      const obs = episode.obs;
      const choices = agent.act(obs, { greedy: options.greedy, avoid: options.avoid });
      const pending = env.prepare(choices.map((c) => c + start));
      if (!pending.known) {
        waiting = { pending, obs, choices };
        return [pending.candidate];
      }
      finishStep(obs, choices, env.commit());
    }
  };
  const episodesStrategy: Strategy = {
    name: agent.name,
    propose: (n) => n >= 1 ? next() : [],
    observe(observations: Observation[]) {
      const w = waiting;
      if (!w) return;
      const ob = observations.find((o) => o.candidate === w.pending.candidate);
      if (!ob) return;
      waiting = undefined;
      finishStep(w.obs, w.choices, env.commit(ob));
    },
  };

  const store = options.store ?? createMemoryRecordStore();
  const runId = options.runId ?? await store.startRun({
    strategy: agent.name,
    seed: 0,
    trials: Number.isFinite(maxSamples) ? maxSamples : 0,
    target: "rl",
    workloadId: await store.upsertWorkload({ name: "space", shape: [], flops: 0 }),
    config: { episodes: options.episodes, ...(options.greedy ? { greedy: true } : {}) },
    machine: {},
    compiler: "",
    tunebookVersion: "",
  });
  await tune({
    strategy: episodesStrategy,
    measurer: options.measurer ?? evaluatorMeasurer(env.evaluator, "env"),
    store,
    runId,
    trials: Infinity,
    batchSize: 1,
    // The episodes end the run (the strategy proposes nothing): a resumed store's known
    // configurations, observed one after another, never do.
    patience: Infinity,
    keyOf: knobKey,
  });
  await store.finishRun(runId);
  return { episodes, tuning };
}
