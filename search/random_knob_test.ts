import assert from "node:assert/strict";
import { createPrng } from "../ir/prng.ts";
import { KnobSpace } from "../ir/knobs.ts";
import { freshPointSampler, knobIndex, observedCost, randomKnobSearch } from "./random.ts";
import { drive, evaluate, single, small, smallValid, space, study } from "./_testing.ts";

Deno.test("random knob search is reproducible by seed", () => {
  const a = drive(randomKnobSearch(space, { seed: 3 }), { budget: 60 }).keys;
  const b = drive(randomKnobSearch(space, { seed: 3 }), { budget: 60 }).keys;
  const c = drive(randomKnobSearch(space, { seed: 4 }), { budget: 60 }).keys;
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
});

Deno.test("random knob search proposes every valid point once, then nothing", () => {
  const valid = [...space.enumerate()].filter((p) => space.isValid(p)).length;
  const s = randomKnobSearch(space, { seed: 1 });
  const run = drive(s, { budget: space.size, batch: 64 });
  assert.equal(run.keys.length, valid, "no repeats, no invalid points");
  assert.equal(run.evaluated.size, valid);
  assert.deepEqual(s.propose(5), []);
  const t = randomKnobSearch(small, { seed: 2 });
  const got = drive(t, { budget: 100, batch: 5, sp: small }).evaluated;
  assert.deepEqual([...got].sort((x, y) => x - y), smallValid);
  assert.deepEqual(t.propose(1), []);
});

Deno.test("random knob search survives failures and a single-point space", () => {
  const s = randomKnobSearch(space, { seed: 5 });
  const run = drive(s, { budget: 40, allFail: true });
  assert.equal(run.evaluated.size, 40);
  assert.equal(run.best, Infinity);
  s.observe([{ candidate: {}, errorKind: "unknown" }, {
    candidate: { knobs: [9] },
    errorKind: "none",
  }]);
  const one = randomKnobSearch(single, { seed: 1 });
  assert.deepEqual(one.propose(3), [{ knobs: [0, 0] }]);
  assert.deepEqual(one.propose(3), []);
});

Deno.test("random knob search skips observed points and uses candidateOf", () => {
  const s = randomKnobSearch(small, { seed: 7, candidateOf: (knobs) => ({ knobs: [...knobs] }) });
  s.observe(smallValid.slice(0, 10).map((i) => evaluate({ knobs: small.point(i) })));
  const rest = s.propose(10).map((c) => small.index(c.knobs!)).sort((a, b) => a - b);
  assert.deepEqual(rest, smallValid.slice(10));
});

Deno.test("fresh-point sampler: distinct valid points of a space too large to list", () => {
  const big = new KnobSpace(
    Array.from({ length: 5 }, (_, k) => ({
      name: `k${k}`,
      kind: "other" as const,
      options: Array.from({ length: 20 }, (_, o) => o),
    })),
    { isValid: (_v, p) => p[0] !== p[1] },
  );
  assert.ok(big.size > 2 ** 20);
  const seen = new Set<number>();
  const sampler = freshPointSampler(big, createPrng(1), seen);
  const drawn = new Set<number>();
  for (let i = 0; i < 2000; i++) {
    const p = sampler.next()!;
    assert.ok(big.isValid(p));
    drawn.add(big.index(p));
  }
  assert.equal(drawn.size, 2000);
  assert.equal(seen.size, 2000);
});

Deno.test("knobIndex and observedCost tolerate malformed observations", () => {
  assert.equal(knobIndex(small, undefined), undefined);
  assert.equal(knobIndex(small, [0, 0]), undefined);
  assert.equal(knobIndex(small, [3, 0, 0]), undefined);
  assert.equal(knobIndex(small, [1, 2, 1]), small.index([1, 2, 1]));
  assert.equal(observedCost({ candidate: {}, errorKind: "none", seconds: 2 }), 2);
  assert.equal(observedCost({ candidate: {}, errorKind: "none" }), Infinity);
  assert.equal(observedCost({ candidate: {}, errorKind: "none", seconds: NaN }), Infinity);
  assert.equal(observedCost({ candidate: {}, errorKind: "run_timeout", seconds: 1 }), Infinity);
});

Deno.test("random knob search: best found over 20 seeds (the baseline)", () => {
  const r = study((seed) => randomKnobSearch(space, { seed }), 100, 8);
  assert.ok(r.mean > 1 && r.mean < 2, `mean best / optimum ${r.mean}`);
});
