import assert from "node:assert/strict";
import { createPrng } from "../ir/prng.ts";
import { gridSearch, lazyPermutation } from "./grid.ts";
import { KnobSpace } from "../ir/knobs.ts";
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

const validIndices = [...space.enumerate()].filter((p) => space.isValid(p)).map((p) =>
  space.index(p)
);

Deno.test("grid search in index order enumerates exactly the valid points, then stops", () => {
  const s = gridSearch(space);
  assert.equal(s.name, "grid");
  const run = drive(s, { budget: space.size, batch: 100 });
  assert.deepEqual(run.keys.map((k) => space.index(k.split(",").map(Number))), validIndices);
  assert.equal(run.evaluated.size, validIndices.length);
  assert.deepEqual(s.propose(10), []);
  assert.deepEqual(s.propose(10), []);
});

Deno.test("shuffled grid search: each valid point once, seeded order", () => {
  const order = (seed: number, batch: number) => {
    const s = gridSearch(space, { order: "shuffled", seed });
    assert.equal(s.name, "grid-shuffled");
    const run = drive(s, { budget: space.size, batch });
    assert.deepEqual(s.propose(3), []);
    return run.keys.map((k) => space.index(k.split(",").map(Number)));
  };
  const a = order(1, 64), b = order(1, 7), c = order(2, 64);
  assert.deepEqual([...a].sort((x, y) => x - y), validIndices);
  assert.deepEqual(a, b, "the batch size does not change the order");
  assert.notDeepEqual(a, c);
  assert.notDeepEqual(a, validIndices);
  assert.deepEqual([...c].sort((x, y) => x - y), validIndices);
});

Deno.test("grid search on small, single-point and empty spaces", () => {
  for (const order of ["index", "shuffled"] as const) {
    const s = gridSearch(small, { order, seed: 3 });
    const got = drive(s, { budget: 100, batch: 5, sp: small }).evaluated;
    assert.deepEqual([...got].sort((x, y) => x - y), smallValid);
    const one = gridSearch(single, { order });
    assert.deepEqual(one.propose(4), [{ knobs: [0, 0] }]);
    assert.deepEqual(one.propose(4), []);
    const none = gridSearch(new KnobSpace(small.knobs, { isValid: () => false }), { order });
    assert.deepEqual(none.propose(4), []);
  }
});

Deno.test("grid search ignores observations, failures included, and uses candidateOf", () => {
  const s = gridSearch(small, { candidateOf: (knobs) => ({ knobs, trace: undefined }) });
  const first = s.propose(2);
  s.observe(first.map((c) => evaluate(c, true)));
  s.observe([{ candidate: {}, errorKind: "unknown" }]);
  assert.deepEqual(first.map((c) => small.index(c.knobs!)), smallValid.slice(0, 2));
  assert.ok("trace" in first[0]);
  assert.deepEqual(s.propose(100).map((c) => small.index(c.knobs!)), smallValid.slice(2));
});

Deno.test("lazy permutations are exact", () => {
  for (const size of [0, 1, 2, 10, 1000]) {
    const next = lazyPermutation(size, createPrng(size));
    const got: number[] = [];
    for (let v = next(); v !== undefined; v = next()) got.push(v);
    assert.deepEqual(got.sort((x, y) => x - y), Array.from({ length: size }, (_, i) => i));
    assert.equal(next(), undefined);
  }
  const huge = lazyPermutation(2 ** 40, createPrng(1));
  const drawn = new Set<number>();
  for (let i = 0; i < 5000; i++) {
    const v = huge()!;
    assert.ok(Number.isInteger(v) && v >= 0 && v < 2 ** 40);
    drawn.add(v);
  }
  assert.equal(drawn.size, 5000);
  assert.ok([...drawn].some((v) => v > 2 ** 32), "indices beyond 32 bits are reached");
});
