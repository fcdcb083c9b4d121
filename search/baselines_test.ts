/** Behaviour of the field's baselines (Kernel Tuner's names), each on the shared synthetic space. */
import assert from "node:assert/strict";
import { basinHopping } from "./basin_hopping.ts";
import { differentialEvolution } from "./diff_evo.ts";
import { dualAnnealing, visitStep } from "./dual_annealing.ts";
import { greedyIls } from "./greedy_ils.ts";
import { particleSwarm } from "./pso.ts";
import { randomKnobSearch } from "./random.ts";
import type { KnobSpace } from "../ir/knobs.ts";
import type { Strategy } from "./strategy.ts";
import { drive, single, small, smallValid, space, study } from "./_testing.ts";
import { createPrng } from "../ir/prng.ts";

const BASELINES: Record<string, (sp: KnobSpace, seed: number) => Strategy> = {
  greedy_ils: (sp, seed) => greedyIls(sp, { seed }),
  basin_hopping: (sp, seed) => basinHopping(sp, { seed }),
  dual_annealing: (sp, seed) => dualAnnealing(sp, { seed }),
  diff_evo: (sp, seed) => differentialEvolution(sp, { seed }),
  pso: (sp, seed) => particleSwarm(sp, { seed }),
};

for (const [name, make] of Object.entries(BASELINES)) {
  Deno.test(`${name} is reproducible by seed and named as in Kernel Tuner`, () => {
    const run = (seed: number) => drive(make(space, seed), { budget: 100, batch: 4 }).keys;
    assert.deepEqual(run(3), run(3));
    assert.notDeepEqual(run(3), run(4));
    assert.equal(make(space, 1).name, name);
  });

  Deno.test(`${name} never repeats a point and exhausts a small restricted space`, () => {
    for (const batch of [1, 5]) {
      const s = make(small, batch);
      const run = drive(s, { budget: 1000, batch, sp: small });
      assert.equal(run.keys.length, smallValid.length, "no repeats");
      assert.deepEqual([...run.evaluated].sort((a, b) => a - b), smallValid);
      assert.deepEqual(s.propose(3), []);
    }
    const one = make(single, 1);
    const [c] = one.propose(2);
    one.observe([{ candidate: c, errorKind: "none", seconds: 1 }]);
    assert.deepEqual(one.propose(2), []);
  });

  Deno.test(`${name} survives a space where everything fails`, () => {
    assert.equal(drive(make(space, 1), { budget: 120, allFail: true }).evaluated.size, 120);
  });

  Deno.test(`${name} beats random search at 25 and at 100 evaluations (20 seeds)`, () => {
    for (const budget of [25, 100]) {
      const rnd = study((seed) => randomKnobSearch(space, { seed }), budget, 1);
      const own = study((seed) => make(space, seed), budget, 1);
      assert.ok(own.mean < rnd.mean, `${name} ${own.mean} vs random ${rnd.mean} at ${budget}`);
    }
  });
}

Deno.test("dual annealing's visiting steps shrink with the temperature", () => {
  const spread = (t: number) => {
    const prng = createPrng(1);
    const xs = Array.from({ length: 2000 }, () => Math.abs(visitStep(prng, 2.62, t))).sort((a, b) =>
      a - b
    );
    return xs[1000];
  };
  assert.ok(spread(1) < spread(100) && spread(100) < spread(5230));
});
