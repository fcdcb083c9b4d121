/**
 * Model-based tuning with AutoTVM's XGBTuner semantics: measure a plan of
 * `planSize` candidates at a time; the first plan is random; afterwards the
 * cost model is retrained on every measurement and a parallel simulated
 * annealing over the knob space, with the model as its energy, picks the
 * best-scored unvisited points for the next plan, whose last
 * `randomRatio` share is drawn at random. An optional diversity filter keeps
 * plan points apart (at least one knob differs by more than one step).
 *
 * Defaults follow AutoTVM: plan_size 64, SA n_iter 500, parallel_size 128,
 * early_stop 50, 5% random.
 *
 * @example
 * ```ts
 * import { modelBasedTuner } from "./model_based.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * import { randomModel } from "../costmodel/random_model.ts";
 * const space = new KnobSpace([{ name: "a", kind: "other", options: [1, 2, 3, 4] }]);
 * const s = modelBasedTuner(space, { seed: 1, model: randomModel(1), planSize: 2 });
 * if (s.propose(2).length !== 2) throw new Error();
 * ```
 * @module
 */
import type { CostModel, Sample } from "../costmodel/model.ts";
import { createPrng } from "../ir/prng.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import { freshPointSampler, knobIndex, observedCost } from "./random.ts";
import type { ValidityModel } from "./validity.ts";
import {
  type Candidate,
  type CandidateOf,
  lazyCandidate,
  type Observation,
  type Strategy,
} from "./strategy.ts";

/** Options of {@link modelBasedTuner}. */
export interface ModelBasedOptions {
  /** Seed of the search's PRNG (required). */
  seed: number;
  /** Cost model that ranks the plan's candidates, retrained on each round's results. */
  model: CostModel;
  /** Makes a candidate of knobs. Default: `{ knobs }`, a candidate of knobs alone. */
  candidateOf?: CandidateOf;
  /** Candidates per plan (and between retrainings). Default 64. */
  planSize?: number;
  /** SA iterations per plan. Default 500. */
  saIters?: number;
  /** Parallel SA chains. Default 128. */
  parallelSize?: number;
  /** Stop SA after this many iterations without a better top-plan. Default 50. */
  earlyStop?: number;
  /** Share of each plan drawn at random (AutoTVM's last 5%). Default 0.05. */
  randomRatio?: number;
  /** Keep plan points at least two steps apart in some knob. Default false. */
  diversity?: boolean;
  /** The model is already trained (transfer): let it pick the first plan too. Default false. */
  warmStart?: boolean;
  /** Name in tables. Default `model.name`. */
  name?: string;
  /**
   * A classifier of invalid points trained on the failures seen
   * (search/validity.ts): the model's picks it deems likely invalid
   * (probability of validity below 0.5) go after the others. Default none.
   */
  validity?: ValidityModel;
}

/** A model-based tuner (AutoTVM XGBTuner semantics) over a knob space. */
export function modelBasedTuner(space: KnobSpace, o: ModelBasedOptions): Strategy {
  const prng = createPrng(o.seed);
  const planSize = o.planSize ?? 64;
  const visited = new Set<number>();
  const labelled = new Set<number>(); // points the validity classifier has learned
  const fresh = freshPointSampler(space, prng, visited);
  const candidateOf = o.candidateOf ?? ((knobs: number[]) => ({ knobs }));
  // What the model scores during SA: knobs now, a trace only if its features read one.
  const scored = (knobs: Point): Candidate => lazyCandidate(knobs, candidateOf);
  let plan: Point[] = [];
  // A pretrained model (transfer) guides the first plan too.
  let measured = o.warmStart ? 1 : 0;
  const pending: Sample[] = [];

  const nextPlan = (): Point[] => {
    const random = Math.max(1, Math.round(planSize * (o.randomRatio ?? 0.05)));
    // Points enter `visited` when planned: SA and the sampler never pick them again.
    const want = planSize - random;
    let out = measured === 0 ? [] : annealWithModel(o.validity ? 2 * want : want);
    if (o.validity) {
      const v = o.validity;
      const ok = out.map((p) => v.pValid(p) >= 0.5);
      out = [...out.filter((_, i) => ok[i]), ...out.filter((_, i) => !ok[i])].slice(0, want);
    }
    out.forEach((p) => visited.add(space.index(p)));
    while (out.length < planSize) {
      const p = fresh.next();
      if (!p) break;
      out.push(p);
    }
    return out;
  };

  /** Parallel SA with the model as energy; returns the best unvisited points found. */
  const annealWithModel = (n: number): Point[] => {
    if (n <= 0) return [];
    const chains: Point[] = [];
    for (let i = 0; i < (o.parallelSize ?? 128); i++) chains.push(space.random(prng));
    const scores = o.model.predict(chains.map(scored));
    const top = new Map<number, { p: Point; s: number }>();
    const consider = (p: Point, s: number) => {
      const k = space.index(p);
      if (visited.has(k) || !space.isValid(p) || top.has(k)) return false;
      if (o.diversity && [...top.values()].some((t) => closeTo(t.p, p))) return false;
      if (top.size < n) {
        top.set(k, { p, s });
        return true;
      }
      let worstK = -1, worst = Infinity;
      for (const [kk, t] of top) if (t.s < worst) [worst, worstK] = [t.s, kk];
      if (s <= worst) return false;
      top.delete(worstK);
      top.set(k, { p, s });
      return true;
    };
    chains.forEach((p, i) => consider(p, scores[i]));
    const iters = o.saIters ?? 500;
    let sinceBetter = 0;
    for (let it = 0; it < iters && sinceBetter < (o.earlyStop ?? 50); it++) {
      const temp = 1 - it / iters;
      const next = chains.map((p) => mutateOne(space, p, prng));
      const nextScores = o.model.predict(next.map(scored));
      let better = false;
      next.forEach((p, i) => {
        if (consider(p, nextScores[i])) better = true;
        const accept = nextScores[i] >= scores[i] ||
          prng.next() < Math.exp((nextScores[i] - scores[i]) / (temp + 1e-5));
        if (accept) {
          chains[i] = p;
          scores[i] = nextScores[i];
        }
      });
      sinceBetter = better ? 0 : sinceBetter + 1;
    }
    return [...top.values()].sort((a, b) => b.s - a.s).map((t) => t.p);
  };

  return {
    name: o.name ?? o.model.name,
    propose(n: number) {
      const out: Point[] = [];
      while (out.length < n) {
        if (plan.length === 0) plan = nextPlan();
        if (plan.length === 0) break;
        out.push(plan.shift()!);
      }
      return out.map(candidateOf);
    },
    observe(observations: Observation[]) {
      const samples = observations.filter((ob) =>
        knobIndex(space, ob.candidate.knobs) !== undefined
      );
      for (const ob of samples) {
        const i = knobIndex(space, ob.candidate.knobs)!;
        if (o.validity && !labelled.has(i)) {
          labelled.add(i);
          o.validity.add(space.point(i), observedCost(ob) < Infinity);
        }
        visited.add(i);
      }
      measured += samples.length;
      pending.push(...samples.map((ob) => ({ candidate: ob.candidate, seconds: ob.seconds })));
      // Retrain once per plan, as AutoTVM does, not after every batch.
      if (pending.length === 0 || (pending.length < planSize && plan.length > 0)) return;
      return o.model.update(pending.splice(0));
    },
  };
}

/** One knob set to a random other option (AutoTVM's SA neighbour). */
function mutateOne(space: KnobSpace, p: Point, prng: ReturnType<typeof createPrng>): Point {
  const q = [...p];
  const i = prng.int(q.length);
  const r = space.knobs[i].options.length;
  if (r > 1) {
    const v = prng.int(r - 1);
    q[i] = v >= q[i] ? v + 1 : v;
  }
  return q;
}

function closeTo(a: Point, b: Point): boolean {
  return a.every((v, i) => Math.abs(v - b[i]) <= 1);
}
