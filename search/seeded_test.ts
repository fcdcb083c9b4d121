import assert from "node:assert/strict";
import { KnobSpace } from "../ir/knobs.ts";
import { randomKnobSearch } from "./random.ts";
import { seededStrategy } from "./seeded.ts";
import type { Candidate, Observation, Strategy } from "./strategy.ts";

const space = new KnobSpace([{ name: "x", kind: "other", options: [1, 2, 3, 4, 5, 6] }]);

/** A strategy that records what it is asked and told. */
function recording(): Strategy & { asked: number[]; told: Observation[][] } {
  const inner = randomKnobSearch(space, { seed: 3 });
  const asked: number[] = [], told: Observation[][] = [];
  return {
    name: "recording",
    asked,
    told,
    propose: (n) => (asked.push(n), inner.propose(n)),
    observe: (o) => void told.push(o),
  };
}

const ok = (candidate: Candidate): Observation => ({ candidate, errorKind: "none", seconds: 1 });

Deno.test("seededStrategy proposes the seeds first, then asks the wrapped strategy for the rest", () => {
  const inner = recording();
  const seed: Candidate = {};
  const s = seededStrategy(inner, [seed]);
  const first = s.propose(3);
  assert.equal(first[0], seed);
  assert.equal(first.length, 3);
  assert.ok(first.slice(1).every((c) => c.knobs !== undefined));
  assert.deepEqual(inner.asked, [2]);
  s.propose(2);
  assert.deepEqual(inner.asked, [2, 2]);
});

Deno.test("seededStrategy never passes a seed's observation to the wrapped strategy unless it shares them", async () => {
  const inner = recording();
  const seed: Candidate = {};
  const s = seededStrategy(inner, [seed]);
  const round = s.propose(3);
  await s.observe(round.map(ok));
  assert.equal(inner.told.length, 1);
  assert.deepEqual(inner.told[0].map((o) => o.candidate), round.slice(1));
});

Deno.test("seededStrategy gives a round of seeds alone neither proposals nor observations", async () => {
  const inner = recording();
  const seeds: Candidate[] = [{}, {}];
  const s = seededStrategy(inner, seeds);
  assert.deepEqual(s.propose(1), [seeds[0]]);
  await s.observe([ok(seeds[0])]);
  assert.deepEqual(inner.asked, []);
  assert.deepEqual(inner.told, []);
  assert.equal(s.propose(2)[0], seeds[1]);
  assert.deepEqual(inner.asked, [1]);
});

Deno.test("seededStrategy with share passes the seeds' observations on, a round of seeds alone too", async () => {
  const inner = recording();
  const seeds: Candidate[] = [{ knobs: [0] }, { knobs: [1] }];
  const s = seededStrategy(inner, seeds, { share: true });
  const round = s.propose(1);
  await s.observe(round.map(ok));
  const next = s.propose(3);
  await s.observe(next.map(ok));
  assert.deepEqual(inner.told.map((r) => r.map((o) => o.candidate)), [[seeds[0]], next]);
  assert.equal(next[0], seeds[1]);
});
