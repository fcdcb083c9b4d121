import assert from "node:assert/strict";
import { geneticAlgorithm } from "./genetic.ts";
import { randomKnobSearch } from "./random.ts";
import type { Candidate } from "./strategy.ts";
import { costOf, drive, evaluate, single, small, smallValid, space, study } from "./_testing.ts";

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
