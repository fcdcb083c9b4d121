/**
 * A reinforcement-learning environment over the schedules of a knob space,
 * in the formulations of Huang, Genc and Haj-Ali ("TVM Scheduling with
 * Reinforcement Learning"):
 *
 * - **multi-step** (default; PPO, DQN): the state is a configuration; an
 *   action adds one of {-1, 0, +1} to every knob index (clipped to the
 *   knob's range); an episode lasts `horizon` steps (default 20) and starts
 *   at all-zeros, a random or the median configuration;
 * - **one-step** (contextual bandit): the state is the start configuration
 *   (the context); one action picks every knob index; episodes last one step.
 *
 * Every step measures the configuration reached through an {@link Evaluator}
 * (a replayed cache, `(cs) => replay.measure(cs)`, or a live runner, the
 * same function `compare` uses). Measurements are cached: revisiting a
 * configuration is free, and `info.samples` counts the distinct
 * configurations measured so far, as the study counts samples. A point the
 * space's `isValid` rejects is never measured (no sample) and gets the
 * timeout penalty.
 *
 * Rewards (`reward` option):
 * - `"time"` (the default, the study's): `-min(t, timeout)` in seconds; an
 *   invalid or failed configuration gets `-timeout` (default 10 s, the
 *   runner's default timeout);
 * - `"log-speedup"`: `ln(reference / min(t, timeout))`, the natural log of
 *   the speedup over `reference` (default: the first valid time measured),
 *   with `timeout` defaulting to 10 x reference, so a failure costs
 *   `-ln 10`. Scale-free, so one agent can learn across spaces; the
 *   strategies of `compare` use it.
 *
 * Observations are fixed-length Float32Arrays: the knob indices normalised
 * to [0, 1], then optional extra features (`features`: the cost model's knob
 * features, trace features `"fixed"` or `"loop"` of a template's candidate,
 * squashed with sign(x) ln(1 + |x|), or your own featurizer), then, in the
 * multi-step formulation, the elapsed fraction of the episode.
 *
 * `step` is asynchronous (a live runner measures asynchronously); drivers
 * that measure in batches use its two halves, {@link ScheduleEnv.prepare}
 * and {@link ScheduleEnv.commit}. (One file past 400 lines: the state
 * machine, rewards and observations share the environment's private state.)
 *
 * @example Drive the environment by hand (or with your own agent)
 * ```ts
 * import { ScheduleEnv } from "./env.ts";
 * import { replaySpaceFromFile } from "../search/replay.ts";
 * const r = await replaySpaceFromFile("pnpoly_RTX_3090");
 * const env = new ScheduleEnv(r.space, (cs) => r.measure(cs), { seed: 1, reward: "log-speedup" });
 * let obs = env.reset(); // Float32Array(env.observationSize)
 * for (let done = false; !done;) {
 *   const action = env.space.knobs.map(() => [-1, 0, 1][Math.floor(Math.random() * 3)]);
 *   const step = await env.step(action);
 *   ({ observation: obs, done } = step);
 *   console.log(step.reward, step.info.samples, step.info.best);
 * }
 * ```
 * @module
 */
import { checkFunction, checkKnobSpace, checkObject } from "../ir/check.ts";
import { featurize, knobFeatures } from "../costmodel/features.ts";
import type { Featurizer } from "../costmodel/learned.ts";
import { createPrng, type Prng } from "../ir/prng.ts";
import type { Evaluator } from "../search/comparison.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import type { ErrorKind } from "../measure/types.ts";
import type { Candidate, CandidateOf, Observation } from "../search/strategy.ts";

export type { Evaluator };

/** `"multi-step"`: {-1, 0, +1} per knob, horizon 20. `"one-step"`: pick every knob index, horizon 1. */
export type Formulation = "multi-step" | "one-step";
/**
 * Where an episode starts: index 0 of every knob, a random valid point, the
 * median indices (the study's three), or the best configuration measured so
 * far (a random one before the first valid measurement; not in the study).
 */
export type StartPolicy = "zeros" | "random" | "median" | "best";
/** See the module documentation. */
export type RewardKind = "time" | "log-speedup";
/** Extra observation features: the cost model's knob features, or trace features of a template. */
export type FeatureKind = "none" | "knobs" | "fixed" | "loop";

/** An observation of the environment: a fixed-length feature vector. */
export type EnvObservation = Float32Array;

/**
 * Actions as a multi-discrete space (gym's MultiDiscrete with a start):
 * component i of an action is an integer in `[start, start + sizes[i])`.
 * Multi-step: sizes 3 and start -1 (the deltas); one-step: the option counts
 * and start 0 (the indices). Agents choose `c` in `[0, sizes[i])`; the
 * action is `c + start`.
 */
export interface ActionSpace {
  /** Choices per action component. */
  sizes: readonly number[];
  /** Value of choice 0 (component i of an action is `c + start`). */
  start: number;
}

/** A measurement of one configuration (what the cache holds). */
export interface Measurement {
  /** `"none"` when the configuration ran and was correct. */
  errorKind: ErrorKind;
  /** Seconds per call, when `errorKind` is `"none"`. */
  seconds?: number;
}

/** What a step reports besides observation, reward and done. */
export interface StepInfo {
  /** The configuration reached. */
  point: Point;
  /** Its flat index in the space. */
  index: number;
  /** Its measurement (`errorKind` `"instantiation_error"` when `isValid` rejects it). */
  errorKind: ErrorKind;
  /** Its seconds per call, when valid. */
  seconds?: number;
  /** True when this step cost no new sample (a revisit, or a point `isValid` rejects). */
  cached: boolean;
  /** Distinct configurations measured so far (the sample count). */
  samples: number;
  /** Best valid seconds measured so far (Infinity before the first). */
  best: number;
  /** Steps taken in this episode (1 after the first step). */
  t: number;
}

/** What {@link ScheduleEnv.step} returns. */
export interface StepResult {
  /** Observation after the step. */
  observation: EnvObservation;
  /** Reward of the step. */
  reward: number;
  /** True when the episode has ended. */
  done: boolean;
  /** What the step reached and measured. */
  info: StepInfo;
}

/** A step between {@link ScheduleEnv.prepare} and {@link ScheduleEnv.commit}. */
export interface PendingStep {
  /** The configuration the step reaches. */
  point: Point;
  /** Its flat index in the space. */
  index: number;
  /** The candidate to measure. */
  candidate: Candidate;
  /** The cached measurement, when the step is free (commit it without one). */
  known?: Measurement;
}

/** Options of a {@link ScheduleEnv}; every field is optional. */
export interface ScheduleEnvOptions {
  /** Default `"multi-step"`. */
  formulation?: Formulation;
  /** Steps per episode (multi-step). Default 20; the one-step formulation always has 1. */
  horizon?: number;
  /** Start of each episode: a policy or a fixed configuration. Default `"random"`. */
  start?: StartPolicy | Point;
  /** Default `"time"` (the study's). */
  reward?: RewardKind;
  /** Seconds a failed configuration is charged (see the module documentation for defaults). */
  timeout?: number;
  /** Reference seconds of `"log-speedup"`. Default: the first valid time measured. */
  reference?: number;
  /** Extra observation features, or a featurizer of candidates. Default `"none"`. */
  features?: FeatureKind | Featurizer;
  /** Maps a point to a candidate (templates add the trace). Default `{ knobs }`. */
  candidateOf?: CandidateOf;
  /** Seed of random starts. Default 0. */
  seed?: number;
  /**
   * Measurement cache by flat index (share one to make several environments' samples common).
   * Default: a new, empty one.
   */
  cache?: Map<number, Measurement>;
}

const DEFAULT_TIMEOUT = 10;
const TIMEOUT_FACTOR = 10;

/** An environment over a knob space; see the module documentation. */
export class ScheduleEnv {
  /** The formulation in force. */
  readonly formulation: Formulation;
  /** Steps per episode. */
  readonly horizon: number;
  /** Length of every observation. */
  readonly observationSize: number;
  /** The action space (see {@link ActionSpace}). */
  readonly actionSpace: ActionSpace;
  /** Measurements by flat index; its size is the sample count. */
  readonly cache: Map<number, Measurement>;
  /** Start of {@link ScheduleEnv.reset} without an argument (a policy or a configuration). */
  start: StartPolicy | Point;
  #evaluate: Evaluator;
  #o: ScheduleEnvOptions;
  #prng: Prng;
  #candidateOf: CandidateOf;
  #extra?: Featurizer;
  #extraCols = 0;
  #point: Point | undefined;
  #t = 0;
  #pending: PendingStep | undefined;
  #reference: number | undefined;
  #best = Infinity;
  #bestPoint: Point | undefined;

  /**
   * @param space the knob space (a template's, or a replayed cache's)
   * @param evaluate measures candidates (e.g. `(cs) => replay.measure(cs)`)
   * @param options see {@link ScheduleEnvOptions}
   */
  /** An environment over `space`, measuring with `evaluate` (see {@link ScheduleEnvOptions}). */
  constructor(readonly space: KnobSpace, evaluate: Evaluator, options: ScheduleEnvOptions = {}) {
    checkKnobSpace(space, "space");
    checkFunction(evaluate, "evaluate");
    checkObject(options, "ScheduleEnv options");
    this.formulation = options.formulation ?? "multi-step";
    if (this.formulation !== "multi-step" && this.formulation !== "one-step") {
      throw new RangeError(`Unknown formulation "${this.formulation}"`);
    }
    this.horizon = this.formulation === "one-step" ? 1 : options.horizon ?? 20;
    if (!Number.isInteger(this.horizon) || this.horizon < 1) {
      throw new RangeError(`horizon must be a positive integer, got ${this.horizon}`);
    }
    if (options.reward && options.reward !== "time" && options.reward !== "log-speedup") {
      throw new RangeError(`Unknown reward "${options.reward}"; known: time, log-speedup`);
    }
    if (options.timeout !== undefined && !(options.timeout > 0)) {
      throw new RangeError(`timeout must be positive, got ${options.timeout}`);
    }
    this.start = options.start ?? "random";
    this.#evaluate = evaluate;
    this.#o = options;
    this.#prng = createPrng(options.seed ?? 0);
    this.#candidateOf = options.candidateOf ?? ((knobs) => ({ knobs: [...knobs] }));
    this.#reference = options.reference;
    this.cache = options.cache ?? new Map();
    for (const [i, m] of this.cache) this.#noteBest(i, m);
    this.#extra = this.#featurizer(options.features ?? "none");
    if (this.#extra) this.#extraCols = this.#extra([this.#candidateOf(space.point(0))]).cols;
    const n = space.knobs.length;
    this.observationSize = n + this.#extraCols + (this.formulation === "multi-step" ? 1 : 0);
    this.actionSpace = this.formulation === "multi-step"
      ? { sizes: space.knobs.map(() => 3), start: -1 }
      : { sizes: space.knobs.map((k) => k.options.length), start: 0 };
  }

  /** What measures this environment's configurations (the tuning loop's driver measures through it). */
  get evaluator(): Evaluator {
    return this.#evaluate;
  }

  /** The current configuration (undefined before the first reset). */
  get point(): Point | undefined {
    return this.#point && [...this.#point];
  }

  /** Distinct configurations measured so far. */
  get samples(): number {
    return this.cache.size;
  }

  /** Best valid seconds measured so far, and where (Infinity and undefined before the first). */
  get best(): { seconds: number; point?: Point } {
    return { seconds: this.#best, point: this.#bestPoint && [...this.#bestPoint] };
  }

  /**
   * Starts an episode at a configuration or by a start policy (default the
   * environment's `start`); returns the first observation. Measures nothing.
   */
  reset(start: StartPolicy | Point = this.start): EnvObservation {
    if (this.#pending) throw new Error("reset: a step is pending (commit it first)");
    this.#point = Array.isArray(start) ? [...start] : this.#startPoint(start);
    this.space.index(this.#point); // checks the point
    this.#t = 0;
    return this.observe();
  }

  /** The observation of the current state (see the module documentation). */
  observe(): EnvObservation {
    if (!this.#point) throw new Error("observe: call reset() first");
    const p = this.#point;
    const out = new Float32Array(this.observationSize);
    this.space.knobs.forEach((k, i) => {
      out[i] = k.options.length > 1 ? p[i] / (k.options.length - 1) : 0;
    });
    if (this.#extra) out.set(this.#extra([this.#candidateOf(p)]).data, p.length);
    if (this.formulation === "multi-step") out[this.observationSize - 1] = this.#t / this.horizon;
    return out;
  }

  /** Takes an action: measures the configuration it reaches (unless cached) and returns the step. */
  async step(action: readonly number[]): Promise<StepResult> {
    const pending = this.prepare(action);
    if (pending.known) return this.commit();
    try {
      const [ob] = await this.#evaluate([pending.candidate]);
      return this.commit(ob);
    } catch (e) {
      this.#pending = undefined;
      throw e;
    }
  }

  /** The configuration an action leads to from the current state (nothing is measured). */
  destination(action: readonly number[]): Point {
    if (!this.#point) throw new Error("step: call reset() first");
    const { sizes, start } = this.actionSpace;
    if (action.length !== sizes.length) {
      throw new RangeError(`An action needs ${sizes.length} components, got ${action.length}`);
    }
    action.forEach((a, i) => {
      if (!Number.isInteger(a) || a < start || a >= start + sizes[i]) {
        throw new RangeError(
          `Action component ${i} must be an integer in [${start}, ${
            start + sizes[i] - 1
          }], got ${a}`,
        );
      }
    });
    return this.formulation === "multi-step" ? this.space.step(this.#point, action) : [...action];
  }

  /**
   * First half of a step: where the action leads, and its cached measurement
   * when it has one. Measure `candidate` (unless `known`), then {@link commit}.
   */
  prepare(action: readonly number[]): PendingStep {
    if (!this.#point) throw new Error("step: call reset() first");
    if (this.#pending) throw new Error("step: a step is pending (commit it first)");
    if (this.#t >= this.horizon) throw new Error("step: the episode is done; call reset()");
    const point = this.destination(action);
    const index = this.space.index(point);
    const known = this.space.isValid(point)
      ? this.cache.get(index)
      : { errorKind: "instantiation_error" as const };
    this.#pending = { point, index, candidate: this.#candidateOf(point), known };
    return this.#pending;
  }

  /** Second half of a step: records the measurement (none when the step was `known`). */
  commit(measurement?: Measurement | Observation): StepResult {
    const p = this.#pending;
    if (!p) throw new Error("commit: no step is pending");
    let m = p.known;
    const cached = m !== undefined;
    if (!m) {
      if (!measurement) throw new Error("commit: the step needs a measurement");
      m = this.record(p.point, measurement);
    }
    this.#pending = undefined;
    this.#point = p.point;
    this.#t++;
    const reward = this.rewardOf(m);
    const done = this.#t >= this.horizon;
    return {
      observation: this.observe(),
      reward,
      done,
      info: {
        point: [...p.point],
        index: p.index,
        errorKind: m.errorKind,
        ...(m.seconds !== undefined ? { seconds: m.seconds } : {}),
        cached,
        samples: this.cache.size,
        best: this.#best,
        t: this.#t,
      },
    };
  }

  /** Adds a measurement made elsewhere to the cache (a sample); returns what is cached. */
  record(point: Point, measurement: Measurement | Observation): Measurement {
    const index = this.space.index(point);
    const old = this.cache.get(index);
    if (old) return old;
    const m: Measurement = measurement.errorKind === "none" && measurement.seconds !== undefined
      ? { errorKind: "none", seconds: measurement.seconds }
      : { errorKind: measurement.errorKind === "none" ? "unknown" : measurement.errorKind };
    this.cache.set(index, m);
    this.#noteBest(index, m);
    return m;
  }

  /** The reward of a measurement (see the module documentation). */
  rewardOf(m: Measurement): number {
    const ok = m.errorKind === "none" && m.seconds !== undefined && Number.isFinite(m.seconds);
    if ((this.#o.reward ?? "time") === "time") {
      const timeout = this.#o.timeout ?? DEFAULT_TIMEOUT;
      return -Math.min(ok ? m.seconds! : timeout, timeout);
    }
    const ref = this.#reference;
    if (ref === undefined) return ok ? 0 : -Math.log(TIMEOUT_FACTOR);
    const timeout = this.#o.timeout ?? TIMEOUT_FACTOR * ref;
    return Math.log(ref / Math.min(ok ? Math.max(m.seconds!, 1e-12) : timeout, timeout));
  }

  #noteBest(index: number, m: Measurement): void {
    if (m.errorKind !== "none" || m.seconds === undefined) return;
    this.#reference ??= m.seconds;
    if (m.seconds < this.#best) {
      this.#best = m.seconds;
      this.#bestPoint = this.space.point(index);
    }
  }

  #startPoint(start: StartPolicy): Point {
    const knobs = this.space.knobs;
    if (start === "zeros") return knobs.map(() => 0);
    if (start === "median") return knobs.map((k) => Math.floor((k.options.length - 1) / 2));
    if (start === "best" && this.#bestPoint) return [...this.#bestPoint];
    if (start !== "random" && start !== "best") {
      throw new RangeError(`Unknown start "${start}"; known: zeros, random, median, best`);
    }
    let p = this.space.random(this.#prng);
    for (let i = 0; i < 64 && !this.space.isValid(p); i++) p = this.space.random(this.#prng);
    return p;
  }

  #featurizer(f: FeatureKind | Featurizer): Featurizer | undefined {
    if (typeof f === "function") return f;
    if (f === "none") return undefined;
    if (f === "knobs") {
      return (cs) => {
        const rows = cs.map((c) => knobFeatures(this.space, c.knobs!));
        return { data: Float32Array.from(rows.flat()), rows: rows.length, cols: rows[0].length };
      };
    }
    if (f !== "fixed" && f !== "loop") {
      throw new RangeError(`Unknown features "${f}"; known: none, knobs, fixed, loop`);
    }
    return (cs) => {
      if (cs.some((c) => !c.trace)) {
        throw new TypeError(`"${f}" features need candidates with traces (a knob template)`);
      }
      const m = featurize(cs.map((c) => c.trace!), f, { invalid: "zeros" });
      const data = m.data.map((x) => Math.sign(x) * Math.log1p(Math.abs(x)));
      return { data, rows: m.rows, cols: m.cols };
    };
  }
}
