import assert from "node:assert/strict";
import type { CostModel, Sample } from "../costmodel/model.ts";
import { evolutionarySearch } from "./evolutionary.ts";
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

/** A nearest-neighbour model: the score of a point is −log(seconds) of its nearest measured point. */
function nearestModel(): CostModel {
  const data: [number[], number][] = [];
  return {
    name: "nearest",
    update(samples: Sample[]) {
      for (const s of samples) data.push([s.candidate.knobs!, s.seconds ?? Infinity]);
    },
    predict(cs: Candidate[]) {
      return cs.map((c) => {
        let bestD = Infinity, bestY = Infinity;
        for (const [p, y] of data) {
          const d = p.reduce((n, v, i) => n + Math.abs(v - c.knobs![i]), 0);
          if (d < bestD || (d === bestD && y < bestY)) [bestD, bestY] = [d, y];
        }
        return data.length === 0 ? 0 : -Math.log(bestY) - 0.01 * bestD;
      });
    },
  };
}

/** A model that knows the cost function. */
const oracle: CostModel = {
  name: "oracle",
  update() {},
  predict: (cs) => cs.map((c) => -costOf(c.knobs!)),
};

Deno.test("evolutionary search is reproducible by seed", () => {
  const run = (seed: number) =>
    drive(evolutionarySearch(space, { seed }), { budget: 48, batch: 16 });
  assert.deepEqual(run(3).keys, run(3).keys);
  assert.notDeepEqual(run(3).keys, run(4).keys);
  const knn = (seed: number) =>
    drive(evolutionarySearch(space, { seed, model: nearestModel(), populationSize: 64 }), {
      budget: 48,
    }).keys;
  assert.deepEqual(knn(5), knn(5));
});

Deno.test("evolutionary search feeds the model and scores candidates made by candidateOf", () => {
  const updates: Sample[] = [];
  let made = 0;
  const spy: CostModel = {
    name: "spy",
    update: (s) => void updates.push(...s),
    predict: (cs) => cs.map((c) => c.knobs!.reduce((a, b) => a + b, 0)),
  };
  const s = evolutionarySearch(space, {
    seed: 1,
    model: spy,
    populationSize: 32,
    candidateOf: (knobs) => (made++, { knobs }),
  });
  const batch = s.propose(8);
  assert.ok(made > 8, "scored candidates come from candidateOf");
  const obs = batch.map((c) => evaluate(c));
  obs[0] = { candidate: batch[0], errorKind: "compile_host" };
  s.observe(obs);
  assert.equal(updates.length, 8);
  assert.equal(updates[0].seconds, undefined);
  assert.equal(updates[0].candidate, batch[0]);
  assert.deepEqual(updates.slice(1).map((u) => u.seconds), obs.slice(1).map((o) => o.seconds));
});

Deno.test("evolutionary search proposes the best-scored points; epsilon makes some random", () => {
  const mean = (cs: Candidate[]) => cs.reduce((a, c) => a + costOf(c.knobs!), 0) / cs.length;
  const greedy = evolutionarySearch(space, { seed: 2, model: oracle, epsilon: 0 }).propose(16);
  const eager = evolutionarySearch(space, { seed: 2, model: oracle, epsilon: 1 }).propose(16);
  const rnd = randomKnobSearch(space, { seed: 2 }).propose(16);
  assert.ok(mean(greedy) < 1.5 * OPTIMUM, `${mean(greedy) / OPTIMUM}`);
  assert.ok(mean(greedy) < mean(eager) && mean(greedy) < mean(rnd));
  assert.equal(new Set(greedy.map((c) => c.knobs!.join())).size, 16);
});

Deno.test("evolutionary search exhausts a small restricted space without repeats", () => {
  for (const batch of [1, 5, 50]) {
    const s = evolutionarySearch(small, { seed: batch, populationSize: 16 });
    const run = drive(s, { budget: 1000, batch, sp: small });
    assert.equal(run.keys.length, smallValid.length, "no repeats");
    assert.deepEqual([...run.evaluated].sort((a, b) => a - b), smallValid);
    assert.deepEqual(s.propose(3), []);
  }
});

Deno.test("evolutionary search survives failures, malformed observations and one point", () => {
  const s = evolutionarySearch(space, { seed: 1, model: nearestModel(), populationSize: 64 });
  const run = drive(s, { budget: 80, allFail: true });
  assert.equal(run.evaluated.size, 80);
  s.observe([{ candidate: {}, errorKind: "unknown" }, {
    candidate: { knobs: [1] },
    errorKind: "none",
  }]);
  assert.equal(s.propose(8).length, 8);
  const one = evolutionarySearch(single, { seed: 1 });
  const [c] = one.propose(2);
  assert.deepEqual(c, { knobs: [0, 0] });
  one.observe([{ candidate: c, errorKind: "none", seconds: 1 }]);
  assert.deepEqual(one.propose(2), []);
});

Deno.test("evolutionary search with a learned model beats random search", () => {
  // Seeds 0..19, 100 evaluations in batches of 8, population 128: with the nearest-neighbour
  // model 1.010 × optimum (18/20 found), random search 1.300 (0/20).
  const evo = study(
    (seed) => evolutionarySearch(space, { seed, model: nearestModel(), populationSize: 128 }),
    100,
    8,
  );
  const rnd = study((seed) => randomKnobSearch(space, { seed }), 100, 8);
  assert.ok(evo.mean < rnd.mean, `evolutionary ${evo.mean} vs random ${rnd.mean}`);
  assert.ok(evo.hits > rnd.hits, `evolutionary hits ${evo.hits}, random ${rnd.hits}`);
});
