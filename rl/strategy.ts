/**
 * An RL agent as an ask/tell {@link Strategy}, so `compare` and `tune` run
 * it next to the other strategies. The agent walks a {@link ScheduleEnv}
 * (multi-step or one-step) and learns from every step; steps that reach a
 * configuration measured already are free and happen inside `propose`, and
 * the first step that reaches an unmeasured one is proposed (one candidate
 * per round: the walk needs its reward before going on). A budget therefore
 * counts distinct configurations, as the RL study counts samples.
 *
 * With `avoidRevisits` (the default) the agent is asked for actions that
 * reach unmeasured configurations ({@link ActOptions.avoid}): it redraws
 * from its own policy, so walks keep producing new samples. If the walk
 * still makes `patience` free steps in a row, the episode restarts at a
 * fresh random configuration, which is proposed first; the strategy
 * proposes nothing once every valid configuration is measured.
 *
 * @example
 * ```ts
 * import { agentStrategy } from "./strategy.ts";
 * import { ppoAgent } from "./ppo.ts";
 * import { runStrategy } from "../tuner/run_strategy.ts";
 * import { replaySpaceFromFile } from "../search/replay.ts";
 * const r = await replaySpaceFromFile("pnpoly_RTX_3090");
 * const s = agentStrategy(r.space, { seed: 1, name: "ppo", makeAgent: (spec, seed) => ppoAgent(spec, { seed }) });
 * const run = await runStrategy(s, (cs) => r.measure(cs), { budget: 50 });
 * console.log(r.optimum / run.best.at(-1)!);
 * s.dispose();
 * ```
 * @module
 */
import { checkFunction, checkInteger, checkKnobSpace, checkObject } from "../ir/check.ts";
import { createPrng } from "../ir/prng.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import { freshPointSampler, knobIndex } from "../search/random.ts";
import type { Candidate, CandidateOf, Observation, Strategy } from "../search/strategy.ts";
import type { ActOptions, Agent, AgentSpec } from "./agent.ts";
import { type PendingStep, ScheduleEnv, type ScheduleEnvOptions } from "./env.ts";

/** Options of {@link agentStrategy}. */
export interface AgentStrategyOptions {
  /** Seed of the environment (starts, jumps); the agent gets `seed` too. */
  seed: number;
  /** Name in tables. */
  name: string;
  /** Builds the agent for the environment's shapes. */
  makeAgent: (spec: AgentSpec, seed: number) => Agent;
  /** Maps a point to a candidate. Default `{ knobs }`. */
  candidateOf?: CandidateOf;
  /**
   * The environment: formulation, horizon, start, reward, features. Default:
   * multi-step, horizon 20, random starts, reward `"log-speedup"`.
   */
  env?: Omit<ScheduleEnvOptions, "candidateOf" | "seed" | "cache">;
  /** Ask the agent for actions that reach unmeasured configurations. Default true. */
  avoidRevisits?: boolean;
  /** Free steps in a row before a restart at a fresh random configuration. Default max(20, 2 x horizon). */
  patience?: number;
}

/** A strategy driven by an agent, with the agent and environment exposed. */
export interface AgentStrategy extends Strategy {
  /** The agent (built at the first proposal). */
  readonly agent: Agent | undefined;
  /** The environment the agent walks. */
  readonly env: ScheduleEnv;
  /** Free steps taken so far (revisits and rejected points). */
  readonly freeSteps: number;
  /** Frees the agent's tensors. */
  dispose(): void;
}

/** Wraps an agent into the ask/tell protocol (see the module documentation). */
export function agentStrategy(space: KnobSpace, o: AgentStrategyOptions): AgentStrategy {
  checkKnobSpace(space, "space");
  checkObject(o, "agentStrategy options");
  checkInteger(o.seed, "seed");
  checkFunction(o.makeAgent, "makeAgent");
  checkFunction(o.candidateOf, "candidateOf", { optional: true });
  const candidateOf = o.candidateOf ?? ((knobs: number[]) => ({ knobs }));
  const env = new ScheduleEnv(space, () => {
    throw new Error("agentStrategy measures through propose and observe");
  }, { reward: "log-speedup", ...o.env, candidateOf, seed: o.seed });
  const start = env.actionSpace.start;
  const patience = o.patience ?? Math.max(20, 2 * env.horizon);
  const seen = new Set<number>();
  const fresh = freshPointSampler(space, createPrng(o.seed + 0x5eed), seen);
  let agent: Agent | undefined;
  let obs: Float32Array | undefined;
  let done = true;
  let step: { pending: PendingStep; obs: Float32Array; choices: number[] } | undefined;
  let jump: Point | undefined;
  let free = 0, freeSteps = 0, exhausted = false;

  const known = (p: Point) => !space.isValid(p) || seen.has(space.index(p));
  const avoid: ActOptions["avoid"] = (o.avoidRevisits ?? true)
    ? (choices) => known(env.destination(choices.map((c) => c + start)))
    : undefined;

  const next = (): Candidate[] => {
    if (step) return [step.pending.candidate];
    if (jump) return [candidateOf(jump)];
    if (exhausted) return [];
    agent ??= o.makeAgent(
      { observationSize: env.observationSize, actionSizes: env.actionSpace.sizes },
      o.seed,
    );
    for (;;) {
      if (done || !obs) {
        obs = env.reset();
        done = false;
      }
      const choices = agent.act(obs, { avoid });
      const pending = env.prepare(choices.map((c) => c + start));
      if (!pending.known) {
        step = { pending, obs, choices };
        return [pending.candidate];
      }
      const r = env.commit();
      agent.learn({
        observation: obs,
        action: choices,
        reward: r.reward,
        next: r.observation,
        done: r.done,
      });
      obs = r.observation;
      done = r.done;
      freeSteps++;
      if (++free >= patience) {
        free = 0;
        const p = fresh.next();
        if (!p) {
          exhausted = true;
          return [];
        }
        seen.delete(space.index(p)); // measured when observed
        jump = p;
        return [candidateOf(p)];
      }
    }
  };

  return {
    name: o.name,
    env,
    get agent() {
      return agent;
    },
    get freeSteps() {
      return freeSteps;
    },
    propose(n: number): Candidate[] {
      return n >= 1 ? next() : [];
    },
    observe(observations: Observation[]): void {
      for (const ob of observations) {
        const i = knobIndex(space, ob.candidate.knobs);
        if (i === undefined) continue;
        if (step && i === step.pending.index) {
          const s = step;
          step = undefined;
          const r = env.commit(ob);
          seen.add(i);
          free = 0;
          agent!.learn({
            observation: s.obs,
            action: s.choices,
            reward: r.reward,
            next: r.observation,
            done: r.done,
          });
          obs = r.observation;
          done = r.done;
        } else {
          env.record(space.point(i), ob);
          seen.add(i);
          if (jump && i === space.index(jump)) {
            obs = env.reset(jump);
            done = false;
            jump = undefined;
          }
        }
      }
    },
    dispose(): void {
      agent?.dispose();
    },
  };
}
