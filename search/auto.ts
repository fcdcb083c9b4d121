/**
 * A portfolio that shares the evaluations among strategies online:
 * OpenTuner's AUC bandit meta-technique (Ansel et al., "OpenTuner: an
 * extensible framework for program autotuning", PACT 2014). Each evaluation
 * goes to one member, chosen by the area under the curve of its recent
 * results (1 when its point was a new best, 0 otherwise, recent uses
 * weighing more) plus an exploration bonus C·sqrt(2·ln(uses) / uses of the
 * member); a member not yet used goes first. Every member observes every
 * measurement, so a model-based member learns from points the others chose.
 * A member's proposal that another already measured is answered from the
 * records (free) and the member asked again. The first `init` evaluations are
 * one random design shared by all members (each would otherwise spend its own
 * random start: below random search at 25 evaluations on 4 of 10 spaces).
 *
 * The strategy table's `auto` has members `bo`, `sa`, `diff_evo` and `greedy_ils`
 * (tuner/strategies.ts, `AUTO_MEMBERS`).
 *
 * @example
 * ```ts
 * import { aucBandit } from "./auto.ts";
 * import { randomKnobSearch } from "./random.ts";
 * import { KnobSpace } from "../ir/knobs.ts";
 * const space = new KnobSpace([{ name: "x", kind: "other", options: [0, 1, 2, 3, 4, 5] }]);
 * const s = aucBandit(space, {
 *   seed: 1,
 *   members: [randomKnobSearch(space, { seed: 1 }), randomKnobSearch(space, { seed: 2 })],
 * });
 * if (s.propose(1).length !== 1) throw new Error();
 * ```
 * @module
 */
import { createPrng } from "../ir/prng.ts";
import type { KnobSpace } from "../ir/knobs.ts";
import { freshPointSampler, knobIndex, observedCost } from "./random.ts";
import type { Candidate, CandidateOf, Observation, Strategy } from "./strategy.ts";

/** Options of {@link aucBandit}. */
export interface AucBanditOptions {
  seed: number;
  /** The strategies sharing the evaluations (each built over the same space). */
  members: Strategy[];
  candidateOf?: CandidateOf;
  /** Uses of a member remembered. Default 500 (OpenTuner). */
  window?: number;
  /** Weight of the exploration bonus. Default 0.05 (OpenTuner). */
  exploration?: number;
  /** Points per `propose` (each from a member chosen afresh). Default 1. */
  batch?: number;
  /** Name in tables. Default `"auto"`. */
  name?: string;
  /**
   * Random points measured first, shared by every member as its initial design (members count
   * points measured before their first proposal towards their own random start). Default 10.
   */
  init?: number;
}

/** Area under the curve of a member's recent results (newer uses weigh more), in [0, 1]. */
export function aucCredit(history: readonly number[]): number {
  const n = history.length;
  if (n === 0) return 0;
  let s = 0;
  for (let i = 0; i < n; i++) s += (i + 1) * history[i];
  return s / ((n * (n + 1)) / 2);
}

/** The AUC bandit over member strategies. */
export function aucBandit(space: KnobSpace, o: AucBanditOptions): Strategy {
  if (o.members.length === 0) throw new RangeError("aucBandit needs at least one member");
  const candidateOf = o.candidateOf ?? ((knobs: number[]) => ({ knobs }));
  const prng = createPrng(o.seed);
  const window = o.window ?? 500, c = o.exploration ?? 0.05;
  const batch = Math.max(1, o.batch ?? 1);
  const history: number[][] = o.members.map(() => []);
  const uses = o.members.map(() => 0);
  const known = new Map<number, Observation>();
  const owner = new Map<number, number>(); // point index -> member that proposed it
  const seen = new Set<number>();
  const sampler = freshPointSampler(space, prng, seen);
  let total = 0, best = Infinity;
  let initLeft = Math.max(0, o.init ?? 10);

  const choose = (): number => {
    const fresh = uses.findIndex((u) => u === 0);
    if (fresh >= 0) return fresh;
    let arg = 0, top = -Infinity;
    uses.forEach((u, m) => {
      const v = aucCredit(history[m]) + c * Math.sqrt((2 * Math.log(total)) / u);
      if (v > top) [top, arg] = [v, m];
    });
    return arg;
  };

  return {
    name: o.name ?? "auto",
    propose(n: number): Candidate[] {
      const out: Candidate[] = [];
      // The shared initial design: random points, no member's.
      for (; initLeft > 0 && out.length < n; initLeft--) {
        const p = sampler.next();
        if (!p) break;
        seen.add(space.index(p));
        out.push(candidateOf(p));
      }
      if (out.length > 0) return out;
      for (let k = 0; k < Math.min(n, batch); k++) {
        const m = choose();
        let p: number[] | undefined;
        for (let t = 0; t < 8 && !p; t++) {
          const [cand] = o.members[m].propose(1);
          const i = knobIndex(space, cand?.knobs);
          if (i === undefined) break;
          const old = known.get(i);
          if (!old && !seen.has(i)) p = cand.knobs;
          // Measured before (by another member): answered from the records, for free.
          else if (old) void o.members[m].observe([{ ...old, candidate: cand }]);
          else break;
        }
        p ??= sampler.next();
        if (!p) break;
        const i = space.index(p);
        seen.add(i);
        owner.set(i, m);
        uses[m]++;
        total++;
        out.push(candidateOf(p));
      }
      return out;
    },
    observe(observations: Observation[]): Promise<void> {
      const fresh: Observation[] = [];
      for (const ob of observations) {
        const i = knobIndex(space, ob.candidate.knobs);
        if (i === undefined) continue;
        seen.add(i);
        if (known.has(i)) continue;
        known.set(i, ob);
        fresh.push(ob);
        const cost = observedCost(ob);
        const m = owner.get(i);
        if (m !== undefined) {
          history[m].push(cost < best ? 1 : 0);
          if (history[m].length > window) history[m].shift();
        }
        if (cost < best) best = cost;
      }
      return Promise.all(o.members.map((s) => s.observe(fresh))).then(() => {});
    },
  };
}
