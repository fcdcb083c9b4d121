/**
 * Simulated annealing over a knob space on measured costs, in the style of
 * Kernel Tuner's `simulated_annealing` strategy: a current point, moves to
 * neighbours (one knob ±1) accepted by the Metropolis rule on the relative
 * cost change, a temperature decaying with every evaluation, and restarts
 * from a random point when stuck or cold.
 *
 * Neighbours are the points one option away in one knob (`space.neighbours`);
 * once those are all seen, any other option of one knob (Kernel Tuner's
 * "Hamming" neighbourhood), which also crosses walls of invalid points.
 * Batches: `propose(n)` returns up to `n` unseen valid neighbours of the
 * current point; when their measurements arrive, the best of them is the move
 * tried against the current point.
 *
 * With `remeasureMargin`, a newcomer that beats the current point by less
 * than that fraction of its cost does not take its place at once: the
 * strategy asks for the current point to be timed again
 * (`Strategy.remeasure`), takes the mean of its two figures as its cost, and
 * only then decides the move (each point is re-timed at most once). A driver
 * that does not re-measure (no hook) leaves the move to be decided as usual
 * at the next proposal.
 *
 * @example
 * ```ts
 * import { simulatedAnnealing } from "./annealing.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([
 *   { name: "x", kind: "other", options: [0, 1, 2, 3, 4, 5, 6, 7] },
 *   { name: "y", kind: "other", options: [0, 1, 2, 3, 4, 5, 6, 7] },
 * ]);
 * const s = simulatedAnnealing(space, { seed: 1 });
 * const [c] = s.propose(1);
 * s.observe([{ candidate: c, errorKind: "none", seconds: 1e-3 }]);
 * if (s.propose(4).length !== 4) throw new Error();
 * ```
 * @module
 */
import { createPrng } from "../ir/prng.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import { freshPointSampler, knobIndex, observedCost } from "./random.ts";
import type { Candidate, CandidateOf, Observation, Strategy } from "./strategy.ts";

/** Options of {@link simulatedAnnealing}. */
export interface SimulatedAnnealingOptions {
  /** Seed of every random choice. */
  seed: number;
  /** Starting temperature (on relative cost changes). Default 1 (Kernel Tuner's `T`). */
  t0?: number;
  /** Temperature factor per evaluation: T = t0 · alpha^evaluations. Default 0.995 (Kernel Tuner). */
  alpha?: number;
  /** Below this temperature the search restarts from a random point, reheated (never when `t0` ≤ `tMin`). Default 0.001 (Kernel Tuner's `T_min`). */
  tMin?: number;
  /** Moves over already measured neighbours allowed while no neighbour is new, before a restart. Default 100. */
  maxStuck?: number;
  /**
   * Random points measured first; the search starts from the best of them (small budgets).
   * Points measured before the first proposal (e.g. by another member of a portfolio) count.
   * Default 10 (with 5, `sa` fell below random search in 12 cells of the strategy study).
   */
  init?: number;
  /** Maps a point to a candidate. Default: `(knobs) => ({ knobs })`. */
  candidateOf?: CandidateOf;
  /**
   * Relative lead below which a newcomer waits for the current point to be
   * timed again (see the module documentation), e.g. 0.05. Default 0: never.
   */
  remeasureMargin?: number;
}

interface Current {
  point: Point;
  index: number;
  /** Measured cost (Infinity when failed); undefined while unmeasured. */
  cost?: number;
}

/**
 * Simulated annealing: measures neighbours of the current point (one knob ±1,
 * then one knob set to any other option) not measured or proposed before; the best neighbour measured in a batch replaces the
 * current point if better, or else with probability exp(−Δ/T) where Δ is the
 * relative cost increase; failures are never accepted over a valid point.
 * When every neighbour is known, the search walks over measured neighbours
 * by the same rule (free: no measurement) until it finds new ones, and
 * restarts from a random unseen point after `maxStuck` such moves, or when the
 * temperature drops below `tMin` (the temperature then restarts at `t0`).
 * Proposes fewer than asked only once every valid point has been proposed.
 */
export function simulatedAnnealing(space: KnobSpace, options: SimulatedAnnealingOptions): Strategy {
  const candidateOf = options.candidateOf ?? ((knobs: number[]) => ({ knobs }));
  const t0 = options.t0 ?? 1;
  const alpha = options.alpha ?? 0.995;
  const tMin = options.tMin ?? 0.001;
  const maxStuck = options.maxStuck ?? 100;
  const prng = createPrng(options.seed);
  const seen = new Set<number>();
  const sampler = freshPointSampler(space, prng, seen);
  const costs = new Map<number, number>();
  let current: Current | undefined;
  let evaluations = 0;
  let stuck = 0;
  let initLeft = Math.max(0, (options.init ?? 10) - 1);
  let warm = false;
  let started = false;
  /** The first start completes a design begun before it (points measured before the first proposal). */
  let completesDesign = false;
  const margin = options.remeasureMargin ?? 0;
  /** A newcomer waiting for the current point's re-timing, and that re-timing if not yet asked. */
  let challenger: Current | undefined;
  let recheck: Candidate[] = [];
  const retimed = new Set<number>();
  /** Decides a waiting move with the figures at hand. */
  const decide = () => {
    const best = challenger;
    challenger = undefined;
    recheck = [];
    if (best && (!current || accept(current.cost, best.cost!))) {
      current = best;
      stuck = 0;
    }
  };

  const temperature = () => t0 * Math.pow(alpha, evaluations);
  const accept = (oldCost: number | undefined, newCost: number): boolean => {
    if (oldCost === undefined || !Number.isFinite(oldCost)) return true;
    if (!Number.isFinite(newCost)) return false;
    if (newCost <= oldCost) return true;
    const delta = oldCost > 0 ? (newCost - oldCost) / oldCost : Infinity;
    return prng.next() < Math.exp(-delta / temperature());
  };
  const shuffle = <T>(xs: T[]): T[] => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = prng.int(i + 1);
      [xs[i], xs[j]] = [xs[j], xs[i]];
    }
    return xs;
  };

  /** Points that differ from `point` in one knob by more than one option (beyond `neighbours`). */
  const hamming = (point: Point): Point[] =>
    space.knobs.flatMap((k, j) =>
      k.options.flatMap((_, o) =>
        Math.abs(o - point[j]) > 1 ? [point.map((x, i) => (i === j ? o : x))] : []
      )
    );

  return {
    name: "sa",
    propose(n: number): Candidate[] {
      // A move still waiting for a re-timing nobody made: decided now.
      if (challenger) decide();
      const out: Candidate[] = [];
      if (!started) {
        // Points measured before the first proposal (a portfolio's shared design) count.
        started = true;
        if (costs.size > initLeft) {
          let arg = -1, low = Infinity;
          for (const [i, c] of costs) if (arg < 0 || c < low) [arg, low] = [i, c];
          current = { point: space.point(arg), index: arg, cost: low };
          initLeft = 0;
        } else {
          initLeft -= costs.size;
          completesDesign = costs.size > 0;
        }
      }
      while (out.length < n) {
        if (!current) {
          const p = sampler.next();
          if (!p) break;
          current = { point: p, index: space.index(p) };
          stuck = 0;
          out.push(candidateOf(p));
          // The design's best leads once its last point is measured (it may be this one).
          if (initLeft > 0 || completesDesign) warm = true;
          completesDesign = false;
          continue;
        }
        if (warm) {
          // The first start: random points until `init` are out; the best of them leads.
          for (; initLeft > 0 && out.length < n; initLeft--) {
            const q = sampler.next();
            if (!q) break;
            out.push(candidateOf(q));
          }
          break;
        }
        for (const near of [space.neighbours(current.point), hamming(current.point)]) {
          const fresh = shuffle(near).filter((q) => !seen.has(space.index(q)) && space.isValid(q));
          for (const q of fresh.slice(0, n - out.length)) {
            seen.add(space.index(q));
            out.push(candidateOf(q));
          }
          if (fresh.length > 0) break;
        }
        if (out.length >= n) break;
        // No new neighbour: move over measured ones (free), or restart.
        const known = space.neighbours(current.point).filter((q) => costs.has(space.index(q)));
        if (current.cost === undefined || known.length === 0 || stuck >= maxStuck) {
          current = undefined;
          continue;
        }
        const q = prng.pick(known);
        const qi = space.index(q);
        stuck++;
        if (accept(current.cost, costs.get(qi)!)) {
          current = { point: q, index: qi, cost: costs.get(qi) };
        }
      }
      return out;
    },
    observe(observations: Observation[]): void {
      let best: Current | undefined;
      for (const o of observations) {
        const i = knobIndex(space, o.candidate.knobs);
        if (i === undefined) continue;
        const cost = observedCost(o);
        seen.add(i);
        costs.set(i, cost);
        evaluations++;
        if (!started) continue;
        if (current && i === current.index) {
          current.cost = cost;
        } else if (!best || cost < best.cost!) {
          best = { point: space.point(i), index: i, cost };
        }
      }
      if (warm && initLeft === 0) {
        // End of the initial design: start from its best point.
        warm = false;
        let arg = -1, low = Infinity;
        for (const [i, c] of costs) if (arg < 0 || c < low) [arg, low] = [i, c];
        if (arg >= 0) current = { point: space.point(arg), index: arg, cost: low };
        stuck = 0;
        return;
      }
      const c = current?.cost;
      if (
        best && current && margin > 0 && c !== undefined && Number.isFinite(c) &&
        best.cost! < c && c - best.cost! < margin * c && !retimed.has(current.index)
      ) {
        // A lead within the margin: the current point is timed again before the move.
        retimed.add(current.index);
        challenger = best;
        recheck = [candidateOf(current.point)];
      } else {
        challenger = best;
        decide();
      }
      if (t0 > tMin && temperature() < tMin) {
        evaluations = 0;
        current = undefined;
        challenger = undefined;
        recheck = [];
      }
    },
    remeasure(): Candidate[] {
      const out = recheck;
      recheck = [];
      return out;
    },
    observeRemeasured(observations: Observation[]): void {
      for (const o of observations) {
        const i = knobIndex(space, o.candidate.knobs);
        if (i === undefined || !costs.has(i)) continue;
        // Its cost: the mean of its two figures (a failure now makes it a failure).
        const cost = (costs.get(i)! + observedCost(o)) / 2;
        costs.set(i, cost);
        if (current && current.index === i) current.cost = cost;
      }
      if (challenger) decide();
    },
  };
}
