/**
 * Shared fixtures of the strategy tests: a synthetic 4-knob space with a
 * smooth cost and a known optimum, an invalid wall and failing points, a
 * driver that runs a strategy to a budget of distinct evaluations, and small
 * and single-point spaces.
 * @module
 */
import assert from "node:assert/strict";
import { KnobSpace } from "../ir/knobs.ts";
import type { Candidate, Observation, Strategy } from "./strategy.ts";

// A synthetic 4-knob space (8^4 = 4096 points) with a smooth cost and a known optimum at
// OPT; a + b = 3 is invalid (a wall in the space), and some points fail when "run".
export const OPT = [5, 2, 6, 3];
export const WEIGHT = [1, 2, 0.5, 1.5];
export const space = new KnobSpace(
  ["a", "b", "c", "d"].map((name) => ({
    name,
    kind: "other" as const,
    options: [0, 1, 2, 3, 4, 5, 6, 7],
  })),
  { isValid: (_v, p) => p[0] + p[1] !== 3 },
);
export const costOf = (p: number[]) =>
  1e-3 * (1 + 0.1 * p.reduce((s, x, i) => s + WEIGHT[i] * (x - OPT[i]) ** 2, 0));
export const fails = (p: number[]) => (p[0] * p[2] + p[3]) % 13 === 0;
export const OPTIMUM = costOf(OPT);

export function evaluate(c: Candidate, allFail = false): Observation {
  const p = c.knobs!;
  return allFail || fails(p)
    ? { candidate: c, errorKind: "runtime_error" }
    : { candidate: c, errorKind: "none", seconds: costOf(p) };
}

/** Runs a strategy to `budget` distinct evaluations (or until it proposes nothing). */
export function drive(
  s: Strategy,
  o: { budget: number; batch?: number; sp?: KnobSpace; allFail?: boolean },
): { best: number; keys: string[]; evaluated: Set<number> } {
  const sp = o.sp ?? space;
  const evaluated = new Set<number>();
  const keys: string[] = [];
  let best = Infinity;
  for (let round = 0; evaluated.size < o.budget; round++) {
    assert.ok(round < 10 * o.budget + 10, "the strategy keeps proposing nothing new");
    const props = s.propose(Math.min(o.batch ?? 8, o.budget - evaluated.size));
    if (props.length === 0) break;
    const obs: Observation[] = [];
    for (const c of props) {
      keys.push(c.knobs!.join(","));
      assert.ok(sp.isValid(c.knobs!), `invalid point ${c.knobs} proposed`);
      const i = sp.index(c.knobs!);
      if (evaluated.has(i)) continue;
      evaluated.add(i);
      const ob = evaluate(c, o.allFail);
      if (ob.seconds !== undefined) best = Math.min(best, ob.seconds);
      obs.push(ob);
    }
    s.observe(obs);
  }
  return { best, keys, evaluated };
}

/** Mean of best-found / optimum over seeds 0..19, and how many seeds found the optimum. */
export function study(make: (seed: number) => Strategy, budget: number, batch: number) {
  const bests = Array.from({ length: 20 }, (_, seed) => drive(make(seed), { budget, batch }).best);
  return {
    mean: bests.reduce((a, b) => a + b / OPTIMUM, 0) / bests.length,
    hits: bests.filter((b) => b === OPTIMUM).length,
  };
}

/** A small restricted space (18 points, 12 valid) and its valid indices. */
export const small = new KnobSpace(
  [
    { name: "x", kind: "other", options: [0, 1, 2] },
    { name: "y", kind: "other", options: [0, 1, 2] },
    { name: "z", kind: "other", options: [0, 1] },
  ],
  { isValid: (v) => ((v.x as number) + (v.y as number)) % 3 !== 1 },
);
export const smallValid = [...small.enumerate()].filter((p) => small.isValid(p)).map((p) =>
  small.index(p)
);
/** A space of one point. */
export const single = new KnobSpace([
  { name: "u", kind: "annotate", options: [1] },
  { name: "v", kind: "other", options: ["only"] },
]);
