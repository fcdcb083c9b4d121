/**
 * Bayesian optimization over a knob space (Kernel Tuner's `bayes_opt`, after
 * Willemsen et al., "Bayesian optimization for auto-tuning GPU kernels",
 * PMBS 2021): a Gaussian process over the knobs' options models the order
 * of the log seconds measured; an acquisition function picks the next point;
 * a small random initial design starts it.
 *
 * Map:
 * - the process is a {@link PoolGP}: its posterior is kept on a pool of
 *   candidate points (the whole space when it has at most `poolSize` points;
 *   else `poolSize` random points, plus the one-knob neighbours of every new
 *   best point), so one step costs O(n·pool), not O(n²·pool);
 * - acquisitions: expected improvement (`"ei"`), probability of improvement
 *   (`"poi"`), lower confidence bound (`"lcb"`), or `"multi"` (default), which
 *   cycles through the three (EI alone over-exploits on rugged spaces);
 * - each acquisition value is multiplied by the squared probability that the
 *   point is valid, from the online {@link validityClassifier} trained on the
 *   failures seen (a constrained acquisition), and points below 0.2 are not
 *   acquired, so evaluations are not spent on configurations that will not
 *   compile or run;
 * - length scale and nugget are refitted by marginal likelihood at
 *   geometrically spaced counts of valid observations;
 * - coordinates (`encoding`, default `"mixed"`): each knob's option index
 *   scaled to [0, 1] and a onehot block, so two options are near when their
 *   indices are, and no option is ever within one length scale of the others
 *   merely because it sits between them (tile_ow = 8, between 14 and 7, is
 *   the narrow optimum of resnet18_conv1_cpu, where the index encoding alone
 *   spent its evaluations on the plateau at one end of the order);
 * - targets (`output`, default `"rank"`): the normal scores of the log
 *   seconds ({@link normalScores}), so a few very slow points do not set the
 *   scale. docs/strategy_study.md has the measurements behind both defaults.
 *
 * @example
 * ```ts
 * import { bayesianOptimization } from "./bo.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([
 *   { name: "x", kind: "other", options: [0, 1, 2, 3, 4, 5, 6, 7] },
 *   { name: "y", kind: "other", options: [0, 1, 2, 3, 4, 5, 6, 7] },
 * ]);
 * const s = bayesianOptimization(space, { seed: 1, init: 4 });
 * for (let i = 0; i < 10; i++) {
 *   const cs = s.propose(1);
 *   s.observe(cs.map((c) => ({ candidate: c, errorKind: "none", seconds: 1 + c.knobs![0] })));
 * }
 * ```
 * @module
 */
import { createPrng } from "../ir/prng.ts";
import { normalCdf, normalPdf, normalScores, PoolGP } from "./gp.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import { freshPointSampler, knobIndex, observedCost } from "./random.ts";
import { neighbourhood } from "./stepwise.ts";
import type { Candidate, CandidateOf, Observation, Strategy } from "./strategy.ts";
import { validityClassifier, type ValidityModel } from "./validity.ts";

/**
 * Coordinates in [0, 1] of a knob's options for the Gaussian process: `"index"`, the option's
 * position; `"value"`, log2 of the value when every option is a positive number (tile sizes,
 * block sizes: 16 and 32 are as far apart as 32 and 64), else the position.
 *
 * @example
 * ```ts
 * import { knobCoordinates } from "./bo.ts";
 * const c = knobCoordinates([1, 2, 4, 16], "value"); // [0, 0.25, 0.5, 1]
 * if (c[2] !== 0.5) throw new Error();
 * ```
 */
export function knobCoordinates(
  options: readonly unknown[],
  encoding: "index" | "value",
): number[] {
  const n = options.length;
  if (n < 2) return options.map(() => 0);
  const numeric = options.every((v) => typeof v === "number" && v > 0 && Number.isFinite(v));
  if (encoding === "value" && numeric) {
    const l = (options as number[]).map((v) => Math.log2(v));
    const lo = Math.min(...l), hi = Math.max(...l);
    if (hi > lo) return l.map((x) => (x - lo) / (hi - lo));
  }
  return options.map((_, i) => i / (n - 1));
}

/**
 * The coordinate vector of each option of a knob: {@link knobCoordinates} as vectors of one, or
 * for `"onehot"` one coordinate per option (1/√2 on the option's own), so any two different
 * options are at distance 1 and the index order of the options means nothing; for `"mixed"`
 * both, the index coordinate times `indexWeight` first.
 *
 * @example
 * ```ts
 * import { optionVectors } from "./bo.ts";
 * const v = optionVectors(["a", "b", "c"], "onehot");
 * if (v.length !== 3 || v[1].length !== 3 || v[1][1] !== Math.SQRT1_2) throw new Error();
 * ```
 */
export function optionVectors(
  options: readonly unknown[],
  encoding: "index" | "value" | "onehot" | "mixed",
  indexWeight = 1,
): number[][] {
  const index = knobCoordinates(options, encoding === "value" ? "value" : "index");
  if (encoding === "index" || encoding === "value" || options.length < 2) {
    return index.map((c) => [c]);
  }
  const hot = options.map((_, i) => options.map((_, j) => (i === j ? Math.SQRT1_2 : 0)));
  return encoding === "onehot" ? hot : hot.map((h, i) => [indexWeight * index[i], ...h]);
}

/** An acquisition function of {@link bayesianOptimization}. */
export type Acquisition = "ei" | "poi" | "lcb" | "multi";

/** Options of {@link bayesianOptimization}. */
export interface BayesOptOptions {
  seed: number;
  candidateOf?: CandidateOf;
  /** Random points measured before the model leads. Default 8. */
  init?: number;
  /**
   * Log costs above this quantile of the measured ones are clipped to it before the process
   * reads them (1: no clipping). Default 1.
   */
  clipQuantile?: number;
  /** Length scales tried at each refit, times sqrt(knobs). Default [0.1, 0.17, 0.3, 0.5, 0.8]. */
  lengthScales?: readonly number[];
  /**
   * Coordinates of knob options ({@link optionVectors}), or `"select"`: the `"mixed"`
   * coordinates, of which the process uses the index ones, the onehot ones or both, whichever
   * has the best marginal likelihood at each refit. Default `"mixed"` (mean score over the ten
   * spaces of docs/strategy_study.md, 10 seeds: 0.706 with `"rank"` output, `"index"` 0.431
   * with `"log"`; `"value"` scored lower than `"index"` on resnet18_conv1_cpu,
   * resnet18_conv2_cpu and convolution_A4000).
   */
  encoding?: "index" | "value" | "onehot" | "mixed" | "select";
  /**
   * What the process models: `"log"`, log seconds; `"rank"`, the normal scores of the log
   * seconds measured ({@link normalScores}: only their order). Default `"rank"`.
   */
  output?: "log" | "rank";
  /** Weight of the index coordinate in the `"mixed"` encoding ({@link optionVectors}). Default 1. */
  indexWeight?: number;
  /** Share of proposals after the initial design that are random points instead. Default 0. */
  explore?: number;
  /** Acquisition function. Default `"multi"` (the strongest on Kernel Tuner's caches). */
  acquisition?: Acquisition;
  /** Exploration margin of `"ei"` and `"poi"`, in log seconds. Default 0.01. */
  xi?: number;
  /** Width of `"lcb"`: mean − kappa·sd. Default 2. */
  kappa?: number;
  /** Largest pool of candidate points. Default 2048. */
  poolSize?: number;
  /** Points proposed per `propose` (the best distinct acquisitions). Default 1 (sequential). */
  batch?: number;
  /** Weigh acquisitions by a classifier of invalid points. Default true. */
  avoidInvalid?: boolean;
  /** Name in tables. Default `"bo"`. */
  name?: string;
}

/** Counts of valid observations at which the kernel is refitted (×1.5 from 4). */
function refitCounts(): Set<number> {
  const s = new Set<number>();
  for (let n = 4; n < 1e6; n = Math.ceil(n * 1.5)) s.add(n);
  return s;
}
const REFIT_AT = refitCounts();
/** Pool points below this probability of being valid are not acquired (random fill-ins may be). */
const MIN_VALID = 0.2;

/** Bayesian optimization (Gaussian process, constrained acquisition over a pool). */
export function bayesianOptimization(space: KnobSpace, o: BayesOptOptions): Strategy {
  const candidateOf = o.candidateOf ?? ((knobs: number[]) => ({ knobs }));
  const prng = createPrng(o.seed);
  const init = Math.max(1, o.init ?? 8);
  const poolCap = o.poolSize ?? 2048;
  const xi = o.xi ?? 0.01, kappa = o.kappa ?? 2;
  const batch = Math.max(1, o.batch ?? 1);
  const active = space.knobs.flatMap((k, j) => (k.options.length > 1 ? [j] : []));
  const enc = o.encoding ?? "mixed";
  const coords = active.map((j) =>
    optionVectors(space.knobs[j].options, enc === "select" ? "mixed" : enc, o.indexWeight)
  );
  const dim = coords.reduce((a, c) => a + c[0].length, 0);
  const encode = (p: Point) => {
    const x = new Float64Array(dim);
    let at = 0;
    active.forEach((j, k) => {
      const v = coords[k][p[j]];
      x.set(v, at);
      at += v.length;
    });
    return x;
  };
  const gp = new PoolGP(Math.max(1, dim));
  if ((o.output ?? "rank") === "rank") gp.transform = normalScores;
  // "select": index, onehot and mixed coordinates of the mixed encoding, chosen by evidence.
  const weightSets: (Float64Array | undefined)[] = [undefined];
  if (enc === "select") {
    const isIndex = new Float64Array(dim);
    let at = 0;
    for (const c of coords) {
      isIndex[at] = 1; // each knob's block is its index coordinate, then its onehot ones
      at += c[0].length;
    }
    const onehot = isIndex.map((v) => 1 - v);
    weightSets.push(isIndex, onehot);
  }
  const validity: ValidityModel | undefined = o.avoidInvalid === false
    ? undefined
    : validityClassifier(space);
  const seen = new Set<number>(); // proposed or observed
  const gpHas = new Set<number>(); // observed (in the process or the classifier)
  let poolFilled = false;
  const sampler = freshPointSampler(space, prng, new Set<number>());
  const slotOf = new Map<number, number>();
  const slotIndex: number[] = [];
  let pValid: Float64Array = new Float64Array(0);
  let validityAt = -1;
  let nValid = 0, observed = 0, step = 0;
  let bestCost = Infinity;
  const logCosts: number[] = [];
  const clip = o.clipQuantile ?? 1;
  const scales = (o.lengthScales ?? [0.1, 0.17, 0.3, 0.5, 0.8]).map((c) =>
    c * Math.sqrt(active.length || 1)
  );

  const addToPool = (indices: number[]) => {
    const fresh = indices.filter((i) => !slotOf.has(i) && !seen.has(i));
    for (const i of fresh) {
      slotOf.set(i, slotIndex.length);
      slotIndex.push(i);
    }
    gp.addPool(fresh.map((i) => encode(space.point(i))));
    validityAt = -1;
  };
  const fillPool = (n: number) => {
    const out: number[] = [];
    if (space.size <= poolCap && !poolFilled) {
      for (let i = 0; i < space.size; i++) if (space.isValid(space.point(i))) out.push(i);
    } else {
      for (let t = 0; t < n; t++) {
        const p = sampler.next();
        if (!p) break;
        out.push(space.index(p));
      }
    }
    poolFilled = true;
    addToPool(out);
  };

  const randomFresh = (): Point | undefined => {
    for (let t = 0; t < 64; t++) {
      const p = space.random(prng);
      const i = space.index(p);
      if (!seen.has(i) && space.isValid(p)) return p;
    }
    const open = slotIndex.filter((i) => !seen.has(i));
    if (open.length > 0) return space.point(prng.pick(open));
    return undefined;
  };

  const acquire = (n: number): Point[] => {
    if (!poolFilled) fillPool(poolCap);
    else if (slotIndex.every((i) => seen.has(i))) fillPool(poolCap / 4);
    if (nValid < 2) return [];
    if (clip < 1 && logCosts.length >= 4) {
      const sorted = [...logCosts].sort((a, b) => a - b);
      gp.clipAbove = sorted[Math.floor(clip * (sorted.length - 1))];
    }
    const { mean, sd } = gp.posterior();
    const m = slotIndex.length;
    if (validity && (validityAt < 0 || observed - validityAt >= Math.max(4, validityAt / 10))) {
      pValid = new Float64Array(m);
      for (let s = 0; s < m; s++) pValid[s] = validity.pValid(space.point(slotIndex[s]));
      validityAt = observed;
    }
    const kinds: Acquisition[] = ["ei", "poi", "lcb"];
    const kind = (o.acquisition ?? "multi") === "multi" ? kinds[step % 3] : o.acquisition!;
    const yBest = Math.min(...gp.targets());
    const scored: { s: number; v: number }[] = [];
    for (let s = 0; s < m; s++) {
      if (seen.has(slotIndex[s])) continue;
      let v: number;
      if (kind === "lcb") v = -(mean[s] - kappa * sd[s]);
      else {
        const imp = yBest - mean[s] - xi;
        const z = imp / sd[s];
        v = kind === "poi" ? normalCdf(z) : imp * normalCdf(z) + sd[s] * normalPdf(z);
      }
      if (validity && pValid.length > s) {
        // Likely invalid points are skipped; the others weigh by the squared probability
        // (unexplored invalid regions have a wide posterior, so a linear weight is too weak).
        if (pValid[s] < MIN_VALID) continue;
        const w = pValid[s] * pValid[s];
        // LCB can be negative: rank by the bound, shifted to be positive, times the weight.
        v = kind === "lcb" ? (v + 1e3) * w : v * w;
      }
      scored.push({ s, v });
    }
    scored.sort((a, b) => b.v - a.v || a.s - b.s);
    return scored.slice(0, n).map(({ s }) => space.point(slotIndex[s]));
  };

  return {
    name: o.name ?? "bo",
    propose(n: number): Candidate[] {
      const want = Math.min(n, seen.size < init ? init - seen.size : batch);
      const explore = o.explore ?? 0;
      const out = seen.size < init || (explore > 0 && prng.next() < explore) ? [] : acquire(want);
      step++;
      for (const p of out) seen.add(space.index(p));
      while (out.length < want) {
        const p = randomFresh();
        if (!p) break;
        seen.add(space.index(p));
        out.push(p);
      }
      return out.map(candidateOf);
    },
    observe(observations: Observation[]): void {
      for (const ob of observations) {
        const i = knobIndex(space, ob.candidate.knobs);
        if (i === undefined) continue;
        seen.add(i);
        if (gpHas.has(i)) continue;
        gpHas.add(i);
        observed++;
        const p = space.point(i);
        const cost = observedCost(ob);
        validity?.add(p, Number.isFinite(cost));
        if (!Number.isFinite(cost)) continue;
        gp.observe(encode(p), Math.log(Math.max(cost, 1e-300)));
        logCosts.push(Math.log(Math.max(cost, 1e-300)));
        nValid++;
        if (REFIT_AT.has(nValid)) gp.fit(scales, [0.001, 0.03, 0.1], weightSets);
        if (cost < bestCost) {
          bestCost = cost;
          if (space.size > poolCap) {
            addToPool(
              neighbourhood(space, p, "hamming").filter((q) => space.isValid(q)).map((q) =>
                space.index(q)
              ),
            );
          }
        }
      }
    },
  };
}
