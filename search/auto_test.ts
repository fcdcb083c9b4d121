import assert from "node:assert/strict";
import { aucBandit, aucCredit } from "./auto.ts";
import type { KnobSpace, Point } from "./knobs.ts";
import { createStrategy } from "./registry.ts";
import type { Candidate, Observation, Strategy } from "./strategy.ts";
import { costOf, drive, fails, small, smallValid, space } from "./_testing.ts";

/** A member proposing fresh points of a list in order. */
function listed(name: string, points: Point[]): Strategy {
  const seen = new Set<string>();
  return {
    name,
    propose(n: number): Candidate[] {
      const out = points.filter((p) => !seen.has(p.join())).slice(0, n);
      out.forEach((p) => seen.add(p.join()));
      return out.map((knobs) => ({ knobs }));
    },
    observe(obs: Observation[]) {
      for (const o of obs) seen.add(o.candidate.knobs!.join());
    },
  };
}

Deno.test("aucCredit weighs recent improvements more than old ones", () => {
  assert.equal(aucCredit([]), 0);
  assert.equal(aucCredit([1, 1, 1]), 1);
  assert.ok(aucCredit([0, 0, 1]) > aucCredit([1, 0, 0]));
});

Deno.test("the AUC bandit gives most evaluations to the member that keeps improving", () => {
  const valid = [...space.enumerate()].filter((p) => space.isValid(p));
  // Worst first: every point it proposes is a new best.
  const improving = valid.filter((p) => !fails(p)).sort((a, b) => costOf(b) - costOf(a));
  const failing = valid.filter((p) => fails(p));
  const s = aucBandit(space, {
    seed: 1,
    members: [listed("improving", improving), listed("failing", failing)],
  });
  const run = drive(s, { budget: 80, batch: 1 });
  const fromFailing = [...run.keys].filter((k) => fails(k.split(",").map(Number))).length;
  assert.ok(fromFailing < 16, `${fromFailing} of 80 evaluations went to the failing member`);
});

Deno.test("auto (the registry's portfolio) is reproducible and exhausts a small space", () => {
  const run = (seed: number, sp: KnobSpace = space, budget = 60) =>
    drive(createStrategy("auto", sp, { seed }), { budget, batch: 1, sp });
  assert.deepEqual(run(2).keys, run(2).keys);
  const r = run(1, small, 1000);
  assert.equal(r.keys.length, smallValid.length);
});
