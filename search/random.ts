/**
 * Random search: every proposal is an independent sample of the design
 * space (trace spaces), or a fresh uniformly random valid point (knob
 * spaces). The baseline every other strategy is compared with. Also the
 * helpers the knob-space strategies share: a sampler of fresh points, the
 * index of an observed knob vector, the cost of an observation.
 *
 * @example
 * ```ts
 * import { randomSearch } from "./random.ts";
 * import { defaultSpace } from "./sketch.ts";
 * import { matmul } from "../ir/workloads.ts";
 * const s = randomSearch(defaultSpace(matmul(32, 32, 32)), { seed: 1 });
 * if (s.propose(4).length !== 4) throw new Error();
 * ```
 * @module
 */
import { createPrng, type Prng } from "../ir/prng.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import type { DesignSpace } from "./space.ts";
import type { Candidate, CandidateOf, Observation, Strategy } from "./strategy.ts";

/** Options of {@link randomSearch}. */
export interface RandomSearchOptions {
  /** Seed of the sampler. */
  seed: number;
}

/** Random search over a design space. */
export function randomSearch(space: DesignSpace, options: RandomSearchOptions): Strategy {
  const prng = createPrng(options.seed);
  return {
    name: "random",
    propose(n: number): Candidate[] {
      return Array.from({ length: n }, () => ({ trace: space.sample(prng) }));
    },
    observe(_observations: Observation[]): void {},
  };
}

/** Options of {@link randomKnobSearch}. */
export interface RandomKnobSearchOptions {
  /** Seed of the sampler. */
  seed: number;
  /** Maps a point to a candidate. Default: `(knobs) => ({ knobs })`. */
  candidateOf?: CandidateOf;
}

/**
 * Random search over a knob space: uniformly random valid points, none
 * proposed twice (points already observed, e.g. from a resumed run, are
 * skipped too). Proposes fewer than asked only once every valid point has
 * been proposed (exact for spaces up to 2^20 points; larger spaces are
 * rejection-sampled, see {@link freshPointSampler}).
 *
 * @example
 * ```ts
 * import { randomKnobSearch } from "./random.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "unroll", kind: "annotate", options: [0, 1] }]);
 * const s = randomKnobSearch(space, { seed: 1 });
 * if (s.propose(4).length !== 2 || s.propose(1).length !== 0) throw new Error();
 * ```
 */
export function randomKnobSearch(space: KnobSpace, options: RandomKnobSearchOptions): Strategy {
  const candidateOf = options.candidateOf ?? ((knobs: number[]) => ({ knobs }));
  const seen = new Set<number>();
  const sampler = freshPointSampler(space, createPrng(options.seed), seen);
  return {
    name: "random",
    propose(n: number): Candidate[] {
      const out: Candidate[] = [];
      while (out.length < n) {
        const p = sampler.next();
        if (!p) break;
        out.push(candidateOf(p));
      }
      return out;
    },
    observe(observations: Observation[]): void {
      for (const o of observations) {
        const i = knobIndex(space, o.candidate.knobs);
        if (i !== undefined) seen.add(i);
      }
    },
  };
}

/** Draws fresh points; see {@link freshPointSampler}. */
export interface FreshPointSampler {
  /** A uniformly random valid point whose index is not in `seen` (then added to it), or undefined when none is left. */
  next(): Point | undefined;
}

/** Options of {@link freshPointSampler}. */
export interface FreshPointSamplerOptions {
  /** Rejection tries per draw before switching to a list of the remaining points. Default 32. */
  tries?: number;
  /** Largest space listed exhaustively; larger spaces keep rejection-sampling. Default 2^20. */
  maxListed?: number;
  /** Rejection tries per draw in a space too large to list before giving up. Default 100000. */
  maxTries?: number;
}

/**
 * A sampler of fresh points: uniformly random valid points of `space` whose
 * flat index is not in `seen`; each point drawn is added to `seen` (so a
 * caller may share the set with its own bookkeeping). It rejection-samples
 * (`tries` draws, default 32) and, when that fails in a space of at most
 * `maxListed` points (default 2^20), switches to a list of the remaining
 * valid points, drawn without replacement: it then returns undefined exactly
 * when every valid point is in `seen`. A larger space keeps rejection-sampling
 * up to `maxTries` draws (default 100000) before giving up.
 */
export function freshPointSampler(
  space: KnobSpace,
  prng: Prng,
  seen: Set<number>,
  options: FreshPointSamplerOptions = {},
): FreshPointSampler {
  const tries = options.tries ?? 32;
  const maxListed = options.maxListed ?? 2 ** 20;
  const maxTries = options.maxTries ?? 100000;
  let listed: number[] | undefined;
  const take = (i: number, p: Point): Point => {
    seen.add(i);
    return p;
  };
  return {
    next(): Point | undefined {
      if (!listed) {
        const limit = space.size <= maxListed ? tries : maxTries;
        for (let t = 0; t < limit; t++) {
          const p = space.random(prng);
          const i = space.index(p);
          if (!seen.has(i) && space.isValid(p)) return take(i, p);
        }
        if (space.size > maxListed) return undefined;
        listed = [];
        for (let i = 0; i < space.size; i++) {
          if (!seen.has(i) && space.isValid(space.point(i))) listed.push(i);
        }
      }
      while (listed.length > 0) {
        const k = prng.int(listed.length);
        const i = listed[k];
        listed[k] = listed[listed.length - 1];
        listed.pop();
        if (!seen.has(i)) return take(i, space.point(i));
      }
      return undefined;
    },
  };
}

/** The flat index of an observed knob vector, or undefined when it is absent or not a point of `space`. */
export function knobIndex(
  space: KnobSpace,
  knobs: readonly number[] | undefined,
): number | undefined {
  if (!knobs) return undefined;
  try {
    return space.index([...knobs]);
  } catch {
    return undefined;
  }
}

/** The cost of an observation: its seconds when valid (`errorKind` `"none"`, finite, ≥ 0), else Infinity. */
export function observedCost(o: Observation): number {
  return o.errorKind === "none" && typeof o.seconds === "number" && Number.isFinite(o.seconds) &&
      o.seconds >= 0
    ? o.seconds
    : Infinity;
}
