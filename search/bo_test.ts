import assert from "node:assert/strict";
import { bayesianOptimization, knobCoordinates, optionVectors } from "./bo.ts";
import { KnobSpace } from "../ir/knobs.ts";
import { randomKnobSearch } from "./random.ts";
import type { Observation } from "./strategy.ts";
import { costOf, drive, single, small, smallValid, space, study } from "./_testing.ts";

Deno.test("bo is reproducible by seed", () => {
  const run = (seed: number) =>
    drive(bayesianOptimization(space, { seed }), { budget: 40, batch: 1 }).keys;
  assert.deepEqual(run(3), run(3));
  assert.notDeepEqual(run(3), run(4));
});

Deno.test("bo never repeats a point and exhausts a small restricted space", () => {
  for (const batch of [1, 4]) {
    const s = bayesianOptimization(small, { seed: batch, init: 3, batch });
    const run = drive(s, { budget: 1000, batch, sp: small });
    assert.equal(run.keys.length, smallValid.length, "no repeats");
    assert.deepEqual([...run.evaluated].sort((a, b) => a - b), smallValid);
    assert.deepEqual(s.propose(3), []);
  }
  const one = bayesianOptimization(single, { seed: 1 });
  const [c] = one.propose(2);
  one.observe([{ candidate: c, errorKind: "none", seconds: 1 }]);
  assert.deepEqual(one.propose(2), []);
});

Deno.test("bo beats random search at 25 and 100 evaluations with multi and EI (20 seeds)", () => {
  for (const budget of [25, 100]) {
    const rnd = study((seed) => randomKnobSearch(space, { seed }), budget, 1);
    for (const acquisition of ["multi", "ei"] as const) {
      const bo = study((seed) => bayesianOptimization(space, { seed, acquisition }), budget, 1);
      assert.ok(bo.mean < rnd.mean, `${acquisition} ${bo.mean} vs random ${rnd.mean} (${budget})`);
    }
  }
});

Deno.test("bo spends fewer evaluations on invalid points when it learns which fail", () => {
  // Options 5..7 of knob b never run (like block sizes beyond a device limit).
  const failures = (avoidInvalid: boolean) => {
    let n = 0;
    for (let seed = 0; seed < 5; seed++) {
      const s = bayesianOptimization(space, { seed, avoidInvalid, acquisition: "ei" });
      const seen = new Set<string>();
      while (seen.size < 60) {
        const obs: Observation[] = [];
        for (const c of s.propose(1)) {
          seen.add(c.knobs!.join());
          const bad = c.knobs![1] >= 5;
          if (bad) n++;
          obs.push(
            bad
              ? { candidate: c, errorKind: "runtime_error" }
              : { candidate: c, errorKind: "none", seconds: costOf(c.knobs!) },
          );
        }
        s.observe(obs);
      }
    }
    return n;
  };
  const blind = failures(false), learned = failures(true);
  assert.ok(learned < 0.7 * blind, `failures: ${learned} learned vs ${blind} blind`);
});

Deno.test("bo keeps a bounded pool on a space of 262,144 points", () => {
  const big = new KnobSpace(
    ["a", "b", "c", "d", "e", "f"].map((name) => ({
      name,
      kind: "other" as const,
      options: [0, 1, 2, 3, 4, 5, 6, 7],
    })),
  );
  const s = bayesianOptimization(big, { seed: 1, poolSize: 128 });
  const seen = new Set<string>();
  for (let i = 0; i < 40; i++) {
    const [c] = s.propose(1);
    assert.ok(!seen.has(c.knobs!.join()), "no repeats");
    seen.add(c.knobs!.join());
    const x = c.knobs!;
    s.observe([{ candidate: c, errorKind: "none", seconds: 1 + x.reduce((a, v) => a + v, 0) }]);
  }
  assert.equal(seen.size, 40);
});

Deno.test("knobCoordinates spaces numeric options by log2 for value and by position for index", () => {
  assert.deepEqual(knobCoordinates([1, 2, 4, 16], "value"), [0, 0.25, 0.5, 1]);
  assert.deepEqual(knobCoordinates([1, 2, 4, 16], "index"), [0, 1 / 3, 2 / 3, 1]);
  assert.deepEqual(knobCoordinates([false, true], "value"), [0, 1]);
  assert.deepEqual(knobCoordinates([7], "value"), [0]);
});

Deno.test("bo with clipQuantile is reproducible and never proposes a point twice", () => {
  const run = (seed: number) =>
    drive(bayesianOptimization(space, { seed, clipQuantile: 0.25, init: 4 }), { budget: 40 });
  const a = run(3);
  assert.deepEqual(a.keys, run(3).keys);
  assert.equal(new Set(a.keys).size, a.keys.length);
});

Deno.test("optionVectors puts any two onehot options at distance 1; mixed adds the index", () => {
  const dist = (a: number[], b: number[]) => Math.hypot(...a.map((x, i) => x - b[i]));
  const hot = optionVectors([1, 2, 4, 8], "onehot");
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) {
      assert.ok(Math.abs(dist(hot[i], hot[j]) - (i === j ? 0 : 1)) < 1e-12);
    }
  }
  const mixed = optionVectors([1, 2, 4, 8], "mixed");
  assert.ok(Math.abs(dist(mixed[0], mixed[3]) - Math.SQRT2) < 1e-12);
  assert.ok(Math.abs(dist(mixed[0], mixed[1]) - Math.hypot(1, 1 / 3)) < 1e-12);
  assert.deepEqual(optionVectors([1, 2, 4], "index"), [[0], [0.5], [1]]);
  assert.deepEqual(optionVectors([5], "onehot"), [[0]]);
});

Deno.test("bo with rank output proposes the same points whatever monotone map of the costs", () => {
  const run = (map: (s: number) => number) => {
    const s = bayesianOptimization(space, { seed: 5, output: "rank", encoding: "onehot" });
    const keys: string[] = [];
    for (let i = 0; i < 30; i++) {
      const cs = s.propose(1);
      keys.push(...cs.map((c) => c.knobs!.join()));
      s.observe(
        cs.map((c) => ({ candidate: c, errorKind: "none", seconds: map(costOf(c.knobs!)) })),
      );
    }
    return keys;
  };
  const plain = run((x) => x);
  assert.deepEqual(run((x) => x ** 4 * 1e6), plain);
  assert.notDeepEqual(
    plain,
    drive(bayesianOptimization(space, { seed: 5, output: "log", encoding: "onehot" }), {
      budget: 30,
      batch: 1,
    }).keys,
    "the log output reads more than the order",
  );
});

Deno.test("bo with explore spends that share of proposals on random points, reproducibly", () => {
  const run = (explore: number) =>
    drive(bayesianOptimization(space, { seed: 2, explore }), { budget: 40, batch: 1 }).keys;
  assert.deepEqual(run(0.5), run(0.5));
  assert.notDeepEqual(run(0.5), run(0));
});
