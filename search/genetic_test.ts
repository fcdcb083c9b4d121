import assert from "node:assert/strict";
import { geneticAlgorithm } from "./genetic.ts";
import { KnobSpace } from "./knobs.ts";
import { randomKnobSearch } from "./random.ts";
import type { Candidate, Observation, Strategy } from "./strategy.ts";

// A synthetic 4-knob space (8^4 = 4096 points) with a smooth cost and a known optimum at
// OPT; a + b = 3 is invalid (a wall in the space), and some points fail when "run".
const OPT = [5, 2, 6, 3];
const WEIGHT = [1, 2, 0.5, 1.5];
const space = new KnobSpace(
  ["a", "b", "c", "d"].map((name) => ({
    name,
    kind: "other" as const,
    options: [0, 1, 2, 3, 4, 5, 6, 7],
  })),
  { isValid: (_v, p) => p[0] + p[1] !== 3 },
);
const costOf = (p: number[]) =>
  1e-3 * (1 + 0.1 * p.reduce((s, x, i) => s + WEIGHT[i] * (x - OPT[i]) ** 2, 0));
const fails = (p: number[]) => (p[0] * p[2] + p[3]) % 13 === 0;
const OPTIMUM = costOf(OPT);

function evaluate(c: Candidate, allFail = false): Observation {
  const p = c.knobs!;
  return allFail || fails(p)
    ? { candidate: c, errorKind: "runtime_error" }
    : { candidate: c, errorKind: "none", seconds: costOf(p) };
}

/** Runs a strategy to `budget` distinct evaluations (or until it proposes nothing). */
function drive(
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
function study(make: (seed: number) => Strategy, budget: number, batch: number) {
  const bests = Array.from({ length: 20 }, (_, seed) => drive(make(seed), { budget, batch }).best);
  return {
    mean: bests.reduce((a, b) => a + b / OPTIMUM, 0) / bests.length,
    hits: bests.filter((b) => b === OPTIMUM).length,
  };
}

/** A small restricted space (18 points, 12 valid) and its valid indices. */
const small = new KnobSpace(
  [
    { name: "x", kind: "other", options: [0, 1, 2] },
    { name: "y", kind: "other", options: [0, 1, 2] },
    { name: "z", kind: "other", options: [0, 1] },
  ],
  { isValid: (v) => ((v.x as number) + (v.y as number)) % 3 !== 1 },
);
const smallValid = [...small.enumerate()].filter((p) => small.isValid(p)).map((p) =>
  small.index(p)
);
/** A space of one point. */
const single = new KnobSpace([
  { name: "u", kind: "annotate", options: [1] },
  { name: "v", kind: "other", options: ["only"] },
]);

Deno.test("genetic algorithm is reproducible by seed", () => {
  const run = (seed: number) =>
    drive(geneticAlgorithm(space, { seed, populationSize: 16 }), { budget: 120 }).keys;
  assert.deepEqual(run(3), run(3));
  assert.notDeepEqual(run(3), run(4));
});

Deno.test("genetic algorithm breeds a new generation of unvisited points once one is measured", () => {
  const s = geneticAlgorithm(space, { seed: 1, populationSize: 20 });
  const first = s.propose(20);
  const key = (c: Candidate) => space.index(c.knobs!);
  assert.equal(new Set(first.map(key)).size, 20);
  s.observe(first.slice(0, 10).map((c) => evaluate(c)));
  // Half measured: more proposals are fresh random points, not the next generation.
  const extra = s.propose(5);
  s.observe([...first.slice(10), ...extra].map((c) => evaluate(c)));
  const second = s.propose(20);
  const all = [...first, ...extra, ...second].map(key);
  assert.equal(new Set(all).size, all.length, "no point proposed twice");
  assert.ok(second.every((c) => space.isValid(c.knobs!)));
  // Children are bred from fit parents: closer to the optimum than the random first generation.
  const mean = (cs: Candidate[]) => cs.reduce((a, c) => a + costOf(c.knobs!), 0) / cs.length;
  assert.ok(mean(second) < mean(first), `${mean(second)} vs ${mean(first)}`);
});

Deno.test("genetic algorithm exhausts a small restricted space without repeats", () => {
  for (const batch of [1, 5, 50]) {
    const s = geneticAlgorithm(small, { seed: batch, populationSize: 4 });
    const run = drive(s, { budget: 1000, batch, sp: small });
    assert.equal(run.keys.length, smallValid.length, "no repeats");
    assert.deepEqual([...run.evaluated].sort((a, b) => a - b), smallValid);
    assert.deepEqual(s.propose(3), []);
  }
});

Deno.test("genetic algorithm survives failures, malformed observations and one point", () => {
  const s = geneticAlgorithm(space, { seed: 1, populationSize: 16 });
  const run = drive(s, { budget: 100, allFail: true });
  assert.equal(run.evaluated.size, 100);
  s.observe([{ candidate: {}, errorKind: "unknown" }, {
    candidate: { knobs: [1] },
    errorKind: "none",
  }]);
  assert.equal(s.propose(8).length, 8);
  const one = geneticAlgorithm(single, { seed: 1 });
  const [c] = one.propose(2);
  assert.deepEqual(c, { knobs: [0, 0] });
  one.observe([{ candidate: c, errorKind: "none", seconds: 1 }]);
  assert.deepEqual(one.propose(2), []);
});

Deno.test("genetic algorithm beats random search on a smooth space", () => {
  // Seeds 0..19. Population 16, 200 evaluations in batches of 8: GA 1.025 × optimum (12/20 found),
  // random 1.192 (0/20). Defaults (population 100), 800 in batches of 16: GA 1.010 (18/20),
  // random 1.075 (5/20).
  const ga = study((seed) => geneticAlgorithm(space, { seed, populationSize: 16 }), 200, 8);
  const rnd = study((seed) => randomKnobSearch(space, { seed }), 200, 8);
  assert.ok(ga.mean < rnd.mean, `GA ${ga.mean} vs random ${rnd.mean}`);
  assert.ok(ga.hits > rnd.hits, `GA hits ${ga.hits}, random ${rnd.hits}`);
  const gaDefault = study((seed) => geneticAlgorithm(space, { seed }), 800, 16);
  const rndLong = study((seed) => randomKnobSearch(space, { seed }), 800, 16);
  assert.ok(gaDefault.mean < rndLong.mean, `GA ${gaDefault.mean} vs random ${rndLong.mean}`);
});
