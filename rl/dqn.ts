/**
 * Double DQN (van Hasselt et al. 2016) for multi-discrete actions, in the
 * factorised form of action branching (Tavakoli et al. 2018, "Action
 * Branching Architectures for Deep Reinforcement Learning"): one Q-network
 * (2 x 64 ReLU by default) with one head per action component, e.g. three
 * Q-values per knob for {-1, 0, +1}, so the output grows linearly with the
 * knobs instead of as 3^N. The greedy action takes each head's argmax.
 *
 * Every head is trained toward one shared target, the branching paper's
 * mean operator with double Q-learning: with a* the online network's
 * argmax of head d at s',
 * `y = r + gamma (1 - done) mean_d Q_target,d(s', a*_d)`,
 * and the loss is the Huber loss of `Q_d(s, a_d) - y` averaged over heads
 * and a minibatch drawn from a replay buffer. The target network is a copy
 * of the online one every `targetUpdate` learning steps; exploration is
 * epsilon-greedy with epsilon decaying linearly from `epsilonStart` to
 * `epsilonEnd` over `epsilonDecaySteps` learning steps.
 *
 * @example
 * ```ts
 * import { dqnAgent } from "./dqn.ts";
 * const agent = dqnAgent({ observationSize: 2, actionSizes: [3, 3] }, { seed: 1, learningStarts: 4, batchSize: 4 });
 * const obs = new Float32Array([0, 1]);
 * for (let i = 0; i < 8; i++) {
 *   const action = agent.act(obs);
 *   agent.learn({ observation: obs, action, reward: action[1] - 1, next: obs, done: i % 4 === 3 });
 * }
 * agent.dispose();
 * ```
 * @module
 */
import { withDefaults } from "../ir/options.ts";
import { createPrng } from "../ir/prng.ts";
import {
  type ActOptions,
  type Agent,
  type AgentSpec,
  checkAgentSpec,
  checkObservation,
  type Transition,
} from "./agent.ts";
import {
  argmaxHeads,
  copyNet,
  createAdam,
  createNet,
  disposeNet,
  forward,
  headsOf,
  oneHot,
  predict,
  tf,
  trainStep,
} from "./_net.ts";

/** Options of {@link dqnAgent}; every field is optional. */
export interface DQNOptions {
  /** Hidden widths of the Q-network. Default `[64, 64]`. */
  hidden?: number[];
  /** Adam learning rate. Default 1e-3. */
  learningRate?: number;
  /** Discount. Default 0.9. */
  gamma?: number;
  /** Transitions the replay buffer keeps (oldest dropped first). Default 10000. */
  bufferSize?: number;
  /** Transitions per minibatch. Default 32. */
  batchSize?: number;
  /** Transitions stored before the first update. Default 64. */
  learningStarts?: number;
  /** Learning steps (transitions) between updates. Default 4. */
  trainEvery?: number;
  /** Learning steps between copies of the online network into the target. Default 200. */
  targetUpdate?: number;
  /** Epsilon at the first step. Default 1. */
  epsilonStart?: number;
  /** Epsilon after the decay. Default 0.05. */
  epsilonEnd?: number;
  /** Learning steps over which epsilon decays linearly. Default 1000. */
  epsilonDecaySteps?: number;
  /** Global gradient-norm clip. Default 10. */
  maxGradNorm?: number;
  /** Candidate actions scored when avoiding actions. Default 32. */
  tries?: number;
  /** Seed of weights, exploration and minibatches. Default 0. */
  seed?: number;
  /** Name in tables. Default `"dqn"`. */
  name?: string;
}

const DEFAULTS: Required<DQNOptions> = {
  hidden: [64, 64],
  learningRate: 1e-3,
  gamma: 0.9,
  bufferSize: 10000,
  batchSize: 32,
  learningStarts: 64,
  trainEvery: 4,
  targetUpdate: 200,
  epsilonStart: 1,
  epsilonEnd: 0.05,
  epsilonDecaySteps: 1000,
  maxGradNorm: 10,
  tries: 32,
  seed: 0,
  name: "dqn",
};

/** A DQN agent, with what a notebook may want to inspect. */
export interface DQNAgent extends Agent {
  /** The options in force, defaults filled in. */
  readonly options: Readonly<Required<DQNOptions>>;
  /** Exploration rate of the next action. */
  readonly epsilon: number;
  /** Gradient updates made so far. */
  readonly updates: number;
  /** Loss of the last update (NaN before the first). */
  readonly lastLoss: number;
  /** Q-values per head for an observation. */
  qValues(observation: Float32Array): number[][];
}

/** Creates a (double, branching) DQN agent for `spec`. */
export function dqnAgent(spec: AgentSpec, options: DQNOptions = {}): DQNAgent {
  checkAgentSpec(spec, options);
  const o = withDefaults(DEFAULTS, options);
  if (!(o.batchSize >= 1 && o.bufferSize >= o.batchSize && o.trainEvery >= 1)) {
    throw new RangeError("need batchSize >= 1, bufferSize >= batchSize and trainEvery >= 1");
  }
  const prng = createPrng(o.seed);
  const heads = headsOf(spec.actionSizes);
  const d = spec.observationSize, nh = heads.sizes.length, k = nh * heads.width;
  const sizes = [d, ...o.hidden, k];
  const online = createNet(sizes, prng, { activation: "relu" });
  const target = createNet(sizes, prng, { activation: "relu" });
  copyNet(online, target);
  const adam = createAdam(online.weights, o.learningRate);
  // Replay buffer as flat ring arrays.
  const cap = o.bufferSize;
  const bObs = new Float32Array(cap * d), bNext = new Float32Array(cap * d);
  const bAct = new Int32Array(cap * nh), bRew = new Float32Array(cap), bDone = new Uint8Array(cap);
  let stored = 0, head = 0, steps = 0, updates = 0, lastLoss = NaN, disposed = false;

  const epsilon = () => {
    const f = Math.min(1, steps / Math.max(1, o.epsilonDecaySteps));
    return o.epsilonStart + f * (o.epsilonEnd - o.epsilonStart);
  };
  const alive = () => {
    if (disposed) throw new Error(`${o.name}: the agent has been disposed`);
  };
  const score = (q: Float32Array, a: readonly number[]) =>
    a.reduce((s, c, h) => s + q[h * heads.width + c], 0);
  const randomAction = () => heads.sizes.map((n) => prng.int(n));

  const update = (): void => {
    const m = o.batchSize;
    const x = new Float32Array(m * d), xn = new Float32Array(m * d);
    const acts: number[][] = [], r = new Float32Array(m), live = new Float32Array(m);
    for (let i = 0; i < m; i++) {
      const j = prng.int(stored);
      x.set(bObs.subarray(j * d, (j + 1) * d), i * d);
      xn.set(bNext.subarray(j * d, (j + 1) * d), i * d);
      acts.push(Array.from(bAct.subarray(j * nh, (j + 1) * nh)));
      r[i] = bRew[j];
      live[i] = bDone[j] ? 0 : 1;
    }
    const qOnline = predict(online, xn, m), qTarget = predict(target, xn, m);
    const y = new Float32Array(m);
    for (let i = 0; i < m; i++) {
      const best = argmaxHeads(heads, qOnline, i);
      let mean = 0;
      best.forEach((c, h) => (mean += qTarget[i * k + h * heads.width + c] / nh));
      y[i] = r[i] + o.gamma * live[i] * mean;
    }
    const mask = oneHot(heads, acts);
    lastLoss = trainStep(adam, () => {
      const q = forward(online, tf.tensor2d(x, [m, d]));
      const chosen = tf.sum(
        tf.reshape(tf.mul(q, tf.tensor2d(mask, [m, k])), [m, nh, heads.width]),
        2,
      );
      return tf.losses.huberLoss(tf.tile(tf.reshape(tf.tensor1d(y), [m, 1]), [1, nh]), chosen);
    }, o.maxGradNorm);
    updates++;
  };

  return {
    name: o.name,
    spec,
    options: o,
    get epsilon() {
      return epsilon();
    },
    get updates() {
      return updates;
    },
    get lastLoss() {
      return lastLoss;
    },
    act(observation: Float32Array, ao: ActOptions = {}): number[] {
      alive();
      checkObservation(spec, observation);
      const tries = Math.max(1, o.tries);
      if (!ao.greedy && prng.next() < epsilon()) {
        let first: number[] | undefined;
        for (let i = 0; i < tries; i++) {
          const a = randomAction();
          if (!ao.avoid || !ao.avoid(a)) return a;
          first ??= a;
        }
        return first!;
      }
      const q = predict(online, observation, 1);
      const greedy = argmaxHeads(heads, q);
      if (!ao.avoid || !ao.avoid(greedy)) return greedy;
      // The best-scored of the greedy action's variants that is not avoided.
      let best: number[] | undefined, bestScore = -Infinity;
      for (let i = 0; i < tries; i++) {
        const a = [...greedy];
        const changes = 1 + prng.int(Math.min(2, nh));
        for (let c = 0; c < changes; c++) {
          const h = prng.int(nh);
          a[h] = prng.int(heads.sizes[h]);
        }
        const s = score(q, a);
        if (s > bestScore && !ao.avoid(a)) [best, bestScore] = [a, s];
      }
      return best ?? greedy;
    },
    learn(t: Transition): void {
      alive();
      checkObservation(spec, t.observation);
      bObs.set(t.observation, head * d);
      bNext.set(t.next, head * d);
      bAct.set(t.action, head * nh);
      bRew[head] = t.reward;
      bDone[head] = t.done ? 1 : 0;
      head = (head + 1) % cap;
      stored = Math.min(cap, stored + 1);
      steps++;
      if (stored >= Math.max(o.learningStarts, o.batchSize) && steps % o.trainEvery === 0) {
        update();
      }
      if (steps % o.targetUpdate === 0) copyNet(online, target);
    },
    qValues(observation: Float32Array): number[][] {
      alive();
      checkObservation(spec, observation);
      const q = predict(online, observation, 1);
      return heads.sizes.map((n, h) =>
        Array.from(q.subarray(h * heads.width, h * heads.width + n))
      );
    },
    dispose(): void {
      if (disposed) return;
      disposed = true;
      disposeNet(online);
      disposeNet(target);
    },
  };
}
