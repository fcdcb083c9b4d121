import assert from "node:assert/strict";
import { aucBandit, aucCredit } from "./auto.ts";
import type { KnobSpace, Point } from "../ir/knobs.ts";
import { createStrategy } from "../tuner/strategies.ts";
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
    init: 0, // no shared random design: every evaluation is a member's
  });
  const run = drive(s, { budget: 80, batch: 1 });
  const fromFailing = [...run.keys].filter((k) => fails(k.split(",").map(Number))).length;
  assert.ok(fromFailing < 16, `${fromFailing} of 80 evaluations went to the failing member`);
});

Deno.test("auto (the table's portfolio) is reproducible and exhausts a small space", async () => {
  const run = async (seed: number, sp: KnobSpace = space, budget = 60) =>
    drive(await createStrategy("auto", sp, { seed }), { budget, batch: 1, sp });
  assert.deepEqual((await run(2)).keys, (await run(2)).keys);
  const r = await run(1, small, 1000);
  assert.equal(r.keys.length, smallValid.length);
});

Deno.test("the AUC bandit measures one shared random design first and every member observes it", async () => {
  const calls: number[] = [0, 0];
  const observed: number[] = [0, 0];
  const member = (k: number): Strategy => ({
    name: `m${k}`,
    propose(): Candidate[] {
      calls[k]++;
      return [];
    },
    observe(obs: Observation[]) {
      observed[k] += obs.length;
    },
  });
  const s = aucBandit(space, { seed: 3, members: [member(0), member(1)], init: 6 });
  const first = s.propose(10);
  assert.equal(first.length, 6, "the shared design alone");
  assert.deepEqual(calls, [0, 0], "no member is asked during the shared design");
  await s.observe(first.map((candidate) => ({ candidate, errorKind: "none", seconds: 1e-3 })));
  assert.deepEqual(observed, [6, 6]);
});

Deno.test("sa and greedy_ils count points measured before their first proposal as their start", async () => {
  const pts = [...space.enumerate()].filter((p) => space.isValid(p) && !fails(p)).slice(0, 10);
  const best = pts.reduce((a, b) => (costOf(a) <= costOf(b) ? a : b));
  const obs = pts.map((knobs) => ({
    candidate: { knobs },
    errorKind: "none" as const,
    seconds: costOf(knobs),
  }));
  for (const name of ["sa", "greedy_ils"]) {
    const st = await createStrategy(name, space, { seed: 4 });
    await st.observe(obs);
    const [c] = st.propose(1);
    const differ = c.knobs!.filter((x, j) => x !== best[j]).length;
    assert.equal(differ, 1, `${name}'s first proposal is a neighbour of the best shared point`);
  }
});
