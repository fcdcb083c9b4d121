/**
 * Proximal Policy Optimization (Schulman et al. 2017) for multi-discrete
 * actions: a factorised categorical policy (one softmax head per action
 * component, e.g. {-1, 0, +1} per knob) and a separate value network, both
 * 2 x 64 tanh by default. Experience is collected for `rolloutSteps`
 * transitions, advantages are estimated with GAE(gamma, lambda) and
 * normalised, then `epochs` passes of shuffled minibatches minimise the
 * clipped surrogate loss plus `valueCoef` x the value error minus
 * `entropyCoef` x the policy entropy, with Adam and gradient clipping.
 *
 * GAE bootstraps from the value of each transition's own next observation,
 * so rollouts may be cut anywhere and episodes may restart elsewhere (the
 * strategy wrapper jumps to fresh configurations). With `horizon` 1 and
 * `gamma` 0 this is the study's contextual bandit ({@link ppoBandit}).
 *
 * Deterministic given `seed`: weights are initialised, actions sampled and
 * minibatches shuffled from the tunebook PRNG; tfjs's cpu backend computes
 * the same floats every run.
 *
 * @example
 * ```ts
 * import { ppoAgent } from "./ppo.ts";
 * const agent = ppoAgent({ observationSize: 3, actionSizes: [3, 3] }, { seed: 1, rolloutSteps: 4 });
 * const obs = new Float32Array([0, 0.5, 0]);
 * for (let i = 0; i < 4; i++) {
 *   const action = agent.act(obs);
 *   agent.learn({ observation: obs, action, reward: action[0] === 2 ? 1 : 0, next: obs, done: false });
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
  createAdam,
  createNet,
  disposeNet,
  forward,
  headLogProbs,
  headsOf,
  oneHot,
  predict,
  sampleHeads,
  tf,
  trainStep,
} from "./_net.ts";

/** Options of {@link ppoAgent}; every field is optional. */
export interface PPOOptions {
  /** Hidden widths of the policy and of the value network. Default `[64, 64]`. */
  hidden?: number[];
  /** Adam learning rate. Default 3e-3. */
  learningRate?: number;
  /** Discount. Default 0.9. */
  gamma?: number;
  /** GAE lambda. Default 0.95. */
  lambda?: number;
  /** Clip range of the probability ratio. Default 0.2. */
  clip?: number;
  /** Passes over each rollout. Default 4. */
  epochs?: number;
  /** Transitions per minibatch. Default 64 (the whole rollout: fewer, larger steps are cheaper on tfjs's cpu backend). */
  minibatch?: number;
  /** Transitions per rollout (between updates). Default 64. */
  rolloutSteps?: number;
  /** Weight of the entropy bonus. Default 0.01. */
  entropyCoef?: number;
  /** Weight of the value loss. Default 0.5. */
  valueCoef?: number;
  /** Global gradient-norm clip. Default 0.5. */
  maxGradNorm?: number;
  /** Samples drawn from the policy before `act` gives up avoiding an action. Default 32. */
  tries?: number;
  /** Seed of weights, actions and shuffles. Default 0. */
  seed?: number;
  /** Name in tables. Default `"ppo"`. */
  name?: string;
}

const DEFAULTS: Required<PPOOptions> = {
  hidden: [64, 64],
  learningRate: 3e-3,
  gamma: 0.9,
  lambda: 0.95,
  clip: 0.2,
  epochs: 4,
  minibatch: 64,
  rolloutSteps: 64,
  entropyCoef: 0.01,
  valueCoef: 0.5,
  maxGradNorm: 0.5,
  tries: 32,
  seed: 0,
  name: "ppo",
};

/** A PPO agent, with what a notebook may want to inspect. */
export interface PPOAgent extends Agent {
  /** The options in force. */
  readonly options: Readonly<Required<PPOOptions>>;
  /** Updates made so far. */
  readonly updates: number;
  /** Mean loss of the last update (NaN before the first). */
  readonly lastLoss: number;
  /** Action probabilities per head for an observation (for plots and tests). */
  probabilities(observation: Float32Array): number[][];
}

/** Creates a PPO agent for `spec`. */
export function ppoAgent(spec: AgentSpec, options: PPOOptions = {}): PPOAgent {
  checkAgentSpec(spec, options);
  const o = withDefaults(DEFAULTS, options);
  if (!(o.rolloutSteps >= 1 && o.minibatch >= 1 && o.epochs >= 1)) {
    throw new RangeError("rolloutSteps, minibatch and epochs must be at least 1");
  }
  const prng = createPrng(o.seed);
  const heads = headsOf(spec.actionSizes);
  const d = spec.observationSize;
  const policy = createNet([d, ...o.hidden, heads.sizes.length * heads.width], prng, {
    outputGain: 0.01,
  });
  const value = createNet([d, ...o.hidden, 1], prng);
  const adam = createAdam([...policy.weights, ...value.weights], o.learningRate);
  const buffer: Transition[] = [];
  let updates = 0, lastLoss = NaN, disposed = false;

  const alive = () => {
    if (disposed) throw new Error(`${o.name}: the agent has been disposed`);
  };

  const matrix = (rows: Float32Array[]): Float32Array => {
    const m = new Float32Array(rows.length * d);
    rows.forEach((r, i) => m.set(r, i * d));
    return m;
  };

  const update = (): void => {
    const n = buffer.length;
    const obs = matrix(buffer.map((t) => t.observation));
    const next = matrix(buffer.map((t) => t.next));
    const both = new Float32Array(2 * n * d);
    both.set(obs);
    both.set(next, n * d);
    const vBoth = predict(value, both, 2 * n);
    const v = vBoth.subarray(0, n), vNext = vBoth.subarray(n);
    const act = oneHot(heads, buffer.map((t) => t.action));
    const oldLogp = tf.tidy(() =>
      tf.sum(
        tf.mul(
          tf.reshape(headLogProbs(heads, forward(policy, tf.tensor2d(obs, [n, d]))), [n, -1]),
          tf.tensor2d(act, [n, act.length / n]),
        ),
        1,
      ).dataSync() as Float32Array
    );
    // GAE, chained only where the next transition starts from this one's next observation.
    const adv = new Float32Array(n);
    let running = 0;
    for (let t = n - 1; t >= 0; t--) {
      const tr = buffer[t];
      const live = tr.done ? 0 : 1;
      const delta = tr.reward + o.gamma * live * vNext[t] - v[t];
      const chained = live && t + 1 < n && sameArray(buffer[t + 1].observation, tr.next);
      running = delta + (chained ? o.gamma * o.lambda * running : 0);
      adv[t] = running;
    }
    const ret = adv.map((a, t) => a + v[t]);
    let mean = 0, sq = 0;
    for (const a of adv) mean += a / n;
    for (const a of adv) sq += (a - mean) ** 2 / n;
    const std = Math.sqrt(sq) + 1e-8;
    const advN = n > 1 ? adv.map((a) => (a - mean) / std) : adv;

    const k = act.length / n;
    const order = Array.from({ length: n }, (_, i) => i);
    let total = 0, steps = 0;
    for (let epoch = 0; epoch < o.epochs; epoch++) {
      for (let i = n - 1; i > 0; i--) {
        const j = prng.int(i + 1);
        [order[i], order[j]] = [order[j], order[i]];
      }
      for (let s = 0; s < n; s += o.minibatch) {
        const idx = order.slice(s, s + o.minibatch);
        const m = idx.length;
        const bx = new Float32Array(m * d), ba = new Float32Array(m * k);
        const bOld = new Float32Array(m), bAdv = new Float32Array(m), bRet = new Float32Array(m);
        idx.forEach((t, r) => {
          bx.set(obs.subarray(t * d, (t + 1) * d), r * d);
          ba.set(act.subarray(t * k, (t + 1) * k), r * k);
          bOld[r] = oldLogp[t];
          bAdv[r] = advN[t];
          bRet[r] = ret[t];
        });
        total += trainStep(adam, () => {
          const x = tf.tensor2d(bx, [m, d]);
          const logp3 = headLogProbs(heads, forward(policy, x));
          const logp = tf.sum(tf.mul(tf.reshape(logp3, [m, k]), tf.tensor2d(ba, [m, k])), 1);
          const ratio = tf.exp(tf.sub(logp, tf.tensor1d(bOld)));
          const a = tf.tensor1d(bAdv);
          const surrogate = tf.minimum(
            tf.mul(ratio, a),
            tf.mul(tf.clipByValue(ratio, 1 - o.clip, 1 + o.clip), a),
          );
          const entropy = tf.neg(tf.sum(tf.mul(tf.exp(logp3), logp3), [1, 2]));
          const vPred = tf.reshape(forward(value, x), [m]);
          const vLoss = tf.mean(tf.square(tf.sub(vPred, tf.tensor1d(bRet))));
          return tf.sub(
            tf.add(tf.neg(tf.mean(surrogate)), tf.mul(o.valueCoef, vLoss)),
            tf.mul(o.entropyCoef, tf.mean(entropy)),
          ) as tf.Scalar;
        }, o.maxGradNorm);
        steps++;
      }
    }
    lastLoss = total / steps;
    updates++;
    buffer.length = 0;
  };

  return {
    name: o.name,
    spec,
    options: o,
    get updates() {
      return updates;
    },
    get lastLoss() {
      return lastLoss;
    },
    act(observation: Float32Array, ao: ActOptions = {}): number[] {
      alive();
      checkObservation(spec, observation);
      const logits = predict(policy, observation, 1);
      if (ao.greedy) return argmaxHeads(heads, logits);
      let first: number[] | undefined;
      for (let i = 0; i < Math.max(1, o.tries); i++) {
        const a = sampleHeads(heads, logits, prng);
        if (!ao.avoid || !ao.avoid(a)) return a;
        first ??= a;
      }
      return first!;
    },
    learn(t: Transition): void {
      alive();
      checkObservation(spec, t.observation);
      buffer.push({ ...t, action: [...t.action] });
      if (buffer.length >= o.rolloutSteps) update();
    },
    probabilities(observation: Float32Array): number[][] {
      alive();
      checkObservation(spec, observation);
      const logits = predict(policy, observation, 1);
      return heads.sizes.map((n, h) => {
        const row = Array.from(logits.subarray(h * heads.width, h * heads.width + n));
        const max = Math.max(...row);
        const e = row.map((x) => Math.exp(x - max));
        const s = e.reduce((a, b) => a + b, 0);
        return e.map((x) => x / s);
      });
    },
    dispose(): void {
      if (disposed) return;
      disposed = true;
      disposeNet(policy);
      disposeNet(value);
    },
  };
}

function sameArray(a: Float32Array, b: Float32Array): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
