/**
 * Bandits for the one-step formulation (one action picks every knob index,
 * horizon 1):
 *
 * - {@link ppoBandit}: the study's contextual bandit, PPO with gamma 0
 *   (and lambda 0): the advantage is the reward minus the value network's
 *   baseline for the context, the policy a factorised categorical over the
 *   knob indices.
 * - {@link linUCBAgent}: LinUCB (Li et al. 2010) over one-hot features of
 *   the chosen indices plus a bias: the reward is modelled as additive in
 *   the knob choices, `theta = A^-1 b` by ridge regression (Sherman-Morrison
 *   updates of `A^-1`), and the action with the highest
 *   `theta . phi + alpha sqrt(phi . A^-1 phi)` among `candidates` random
 *   actions and variants of the greedy one is played. Plain arithmetic, no
 *   network; the observation is not used (a single space's context is
 *   constant; across layers use the PPO bandit with trace features).
 *
 * @example
 * ```ts
 * import { linUCBAgent } from "./bandit.ts";
 * const agent = linUCBAgent({ observationSize: 1, actionSizes: [4, 4] }, { seed: 1 });
 * const obs = new Float32Array(1);
 * for (let i = 0; i < 20; i++) {
 *   const a = agent.act(obs);
 *   agent.learn({ observation: obs, action: a, reward: -Math.abs(a[0] - 2) - Math.abs(a[1] - 1), next: obs, done: true });
 * }
 * if (agent.act(obs, { greedy: true }).join() !== "2,1") throw new Error();
 * ```
 * @module
 */
import { createPrng } from "../ir/prng.ts";
import type { ActOptions, Agent, AgentSpec, Transition } from "./agent.ts";
import { type PPOAgent, ppoAgent, type PPOOptions } from "./ppo.ts";

/**
 * The study's contextual bandit: PPO with gamma 0 and lambda 0, to be run on
 * a one-step environment. Defaults as {@link ppoAgent} except `rolloutSteps`
 * 32, `minibatch` 32 and `tries` 256 (a concentrated policy needs more draws
 * to find an unmeasured configuration); name `"bandit"`.
 */
export function ppoBandit(spec: AgentSpec, options: PPOOptions = {}): PPOAgent {
  return ppoAgent(spec, {
    rolloutSteps: 32,
    minibatch: 32,
    tries: 256,
    name: "bandit",
    ...options,
    gamma: 0,
    lambda: 0,
  });
}

/** Options of {@link linUCBAgent}; every field is optional. */
export interface LinUCBOptions {
  /** Width of the confidence bonus. Default 1. */
  alpha?: number;
  /** Ridge regularisation (A starts as ridge x I). Default 1. */
  ridge?: number;
  /** Random actions scored per `act` (besides variants of the greedy one). Default 256. */
  candidates?: number;
  /** Seed of the candidate draws. Default 0. */
  seed?: number;
  /** Name in tables. Default `"bandit-linucb"`. */
  name?: string;
}

/** A LinUCB agent, with its model exposed. */
export interface LinUCBAgent extends Agent {
  /** Ridge estimate of the reward of each choice of each head (without the bias). */
  weights(): number[][];
}

/** Creates a LinUCB agent (see the module documentation). */
export function linUCBAgent(spec: AgentSpec, options: LinUCBOptions = {}): LinUCBAgent {
  const alpha = options.alpha ?? 1, ridge = options.ridge ?? 1;
  const candidates = options.candidates ?? 256;
  if (!(ridge > 0) || !(alpha >= 0)) throw new RangeError("need ridge > 0 and alpha >= 0");
  const prng = createPrng(options.seed ?? 0);
  const sizes = spec.actionSizes;
  const offsets: number[] = [];
  let dim = 0;
  for (const n of sizes) {
    offsets.push(dim);
    dim += n;
  }
  const biasAt = dim++;
  const inv = new Float64Array(dim * dim); // A^-1
  for (let i = 0; i < dim; i++) inv[i * dim + i] = 1 / ridge;
  const b = new Float64Array(dim);
  let theta = new Float64Array(dim);
  const idx = new Int32Array(sizes.length + 1);
  const active = (a: readonly number[]): Int32Array => {
    for (let h = 0; h < a.length; h++) idx[h] = offsets[h] + a[h];
    idx[a.length] = biasAt;
    return idx;
  };
  /** theta . phi + bonus x sqrt(phi . A^-1 phi) for the one-hot phi of `a`. */
  const scoreOf = (a: readonly number[], bonus: number) => {
    active(a);
    let mean = 0, w = 0;
    for (let i = 0; i < idx.length; i++) {
      mean += theta[idx[i]];
      if (bonus === 0) continue;
      const row = idx[i] * dim;
      for (let j = 0; j < idx.length; j++) w += inv[row + idx[j]];
    }
    return mean + bonus * Math.sqrt(Math.max(0, w));
  };
  const greedyAction = () =>
    sizes.map((n, h) => {
      let best = 0;
      for (let c = 1; c < n; c++) if (theta[offsets[h] + c] > theta[offsets[h] + best]) best = c;
      return best;
    });

  return {
    name: options.name ?? "bandit-linucb",
    spec,
    act(_observation: Float32Array, ao: ActOptions = {}): number[] {
      const g = greedyAction();
      const pool: number[][] = [g];
      for (let i = 0; i < candidates; i++) {
        if (i % 2 === 0) pool.push(sizes.map((n) => prng.int(n)));
        else {
          const a = [...g];
          for (let c = 1 + prng.int(Math.min(3, sizes.length)); c > 0; c--) {
            const h = prng.int(sizes.length);
            a[h] = prng.int(sizes[h]);
          }
          pool.push(a);
        }
      }
      let best: number[] | undefined, bestScore = -Infinity;
      for (const a of pool) {
        const s = scoreOf(a, ao.greedy ? 0 : alpha);
        if (s > bestScore && (!ao.avoid || !ao.avoid(a))) [best, bestScore] = [a, s];
      }
      return best ?? g;
    },
    learn(t: Transition): void {
      active(t.action);
      // Sherman-Morrison: A^-1 -= (A^-1 phi)(A^-1 phi)^T / (1 + phi^T A^-1 phi).
      const u = new Float64Array(dim);
      for (let i = 0; i < dim; i++) {
        for (let j = 0; j < idx.length; j++) u[i] += inv[i * dim + idx[j]];
      }
      let denom = 1;
      for (let j = 0; j < idx.length; j++) denom += u[idx[j]];
      for (let i = 0; i < dim; i++) {
        for (let j = 0; j < dim; j++) inv[i * dim + j] -= (u[i] * u[j]) / denom;
      }
      for (let j = 0; j < idx.length; j++) b[idx[j]] += t.reward;
      const next = new Float64Array(dim);
      for (let i = 0; i < dim; i++) {
        let s = 0;
        for (let j = 0; j < dim; j++) s += inv[i * dim + j] * b[j];
        next[i] = s;
      }
      theta = next;
    },
    weights: () => sizes.map((n, h) => Array.from(theta.subarray(offsets[h], offsets[h] + n))),
    dispose: () => {},
  };
}
