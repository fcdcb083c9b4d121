import assert from "node:assert/strict";
import { ScheduleEnv } from "./env.ts";
import { KnobSpace } from "../ir/knobs.ts";
import type { Candidate, Observation } from "../search/strategy.ts";
import { FIXED_FEATURE_NAMES } from "../costmodel/features.ts";
import { templateSpace } from "../search/templates/registry.ts";
import { createWorkload } from "../ir/workloads.ts";

// Three knobs of 4, 3 and 2 options; seconds = 1 + sum of indices; x = 3 fails at run time.
const space = new KnobSpace([
  { name: "x", kind: "other", options: [0, 1, 2, 3] },
  { name: "y", kind: "other", options: [0, 1, 2] },
  { name: "z", kind: "other", options: [0, 1] },
], { isValid: (v) => !(v.x === 0 && v.y === 2) });

function counting() {
  const calls: number[][] = [];
  const evaluate = (cs: Candidate[]): Observation[] =>
    cs.map((c) => {
      calls.push(c.knobs!);
      const p = c.knobs!;
      return p[0] === 3
        ? { candidate: c, errorKind: "runtime_error" }
        : { candidate: c, errorKind: "none", seconds: 1 + p[0] + p[1] + p[2] };
    });
  return { calls, evaluate };
}

Deno.test("ScheduleEnv.step adds {-1, 0, +1} per knob, clipped, and ends after the horizon", async () => {
  const { evaluate } = counting();
  const env = new ScheduleEnv(space, evaluate, { start: "zeros", horizon: 3 });
  assert.deepEqual(env.actionSpace, { sizes: [3, 3, 3], start: -1 });
  assert.equal(env.observationSize, 4);
  assert.deepEqual([...env.reset()], [0, 0, 0, 0]);
  let s = await env.step([1, -1, 1]);
  assert.deepEqual(s.info.point, [1, 0, 1]);
  assert.deepEqual([...s.observation].map((x) => +x.toFixed(3)), [0.333, 0, 1, 0.333]);
  assert.equal(s.done, false);
  s = await env.step([1, 1, 1]);
  assert.deepEqual(s.info.point, [2, 1, 1]);
  s = await env.step([0, 0, 0]);
  assert.equal(s.done, true);
  assert.equal(s.info.t, 3);
  await assert.rejects(() => env.step([0, 0, 0]), /episode is done/);
  env.reset("median");
  assert.deepEqual(env.point, [1, 1, 0]);
});

Deno.test("ScheduleEnv counts distinct measurements: a revisit is free and cached", async () => {
  const { calls, evaluate } = counting();
  const env = new ScheduleEnv(space, evaluate, { start: "zeros" });
  env.reset();
  const a = await env.step([1, 0, 0]);
  const b = await env.step([-1, 0, 0]);
  const c = await env.step([1, 0, 0]);
  assert.deepEqual([a.info.cached, b.info.cached, c.info.cached], [false, false, true]);
  assert.equal(c.info.samples, 2);
  assert.equal(c.reward, a.reward);
  assert.equal(calls.length, 2);
  assert.equal(env.best.seconds, 1);
  assert.deepEqual(env.best.point, [0, 0, 0]);
});

Deno.test("the time reward is -min(t, timeout); failures and rejected points get -timeout", async () => {
  const { calls, evaluate } = counting();
  const env = new ScheduleEnv(space, evaluate, { start: [2, 2, 0], timeout: 5 });
  env.reset();
  assert.equal((await env.step([0, 0, 1])).reward, -5); // 1 + 2 + 2 + 1 = 6 > timeout
  assert.equal((await env.step([1, 0, 0])).reward, -5); // x = 3 fails
  env.reset([1, 2, 0]);
  const rejected = await env.step([-1, 0, 0]); // x = 0, y = 2 violates isValid
  assert.equal(rejected.reward, -5);
  assert.equal(rejected.info.cached, true);
  assert.equal(rejected.info.errorKind, "instantiation_error");
  assert.equal(calls.length, 2);
});

Deno.test("the log-speedup reward is ln(reference / t), failures cost -ln 10", async () => {
  const { evaluate } = counting();
  const env = new ScheduleEnv(space, evaluate, { start: [1, 0, 0], reward: "log-speedup" });
  env.reset();
  const first = await env.step([1, 0, 0]); // 3 s: the reference
  assert.equal(first.reward, 0);
  const faster = await env.step([-1, 0, 0]); // 2 s
  assert.ok(Math.abs(faster.reward - Math.log(3 / 2)) < 1e-12);
  env.reset([2, 0, 0]);
  const failed = await env.step([1, 0, 0]);
  assert.ok(Math.abs(failed.reward + Math.log(10)) < 1e-12);
});

Deno.test("the one-step formulation picks every knob index in one action of horizon 1", async () => {
  const { evaluate } = counting();
  const env = new ScheduleEnv(space, evaluate, { formulation: "one-step", start: "zeros" });
  assert.deepEqual(env.actionSpace, { sizes: [4, 3, 2], start: 0 });
  assert.equal(env.horizon, 1);
  assert.equal(env.observationSize, 3);
  env.reset();
  const s = await env.step([2, 1, 1]);
  assert.deepEqual(s.info.point, [2, 1, 1]);
  assert.equal(s.done, true);
  env.reset();
  assert.throws(() => env.prepare([4, 0, 0]), RangeError);
});

Deno.test("prepare and commit split a step for drivers that measure in batches", () => {
  const env = new ScheduleEnv(space, () => {
    throw new Error("not called");
  }, { start: "zeros" });
  env.reset();
  const p = env.prepare([1, 1, 0]);
  assert.equal(p.known, undefined);
  assert.deepEqual(p.candidate, { knobs: [1, 1, 0] });
  assert.throws(() => env.prepare([0, 0, 0]), /pending/);
  const s = env.commit({ candidate: p.candidate, errorKind: "none", seconds: 0.5 });
  assert.equal(s.info.samples, 1);
  assert.deepEqual(env.destination([-1, -1, 1]), [0, 0, 1]);
});

Deno.test("random starts are seeded, and invalid options are RangeErrors", () => {
  const { evaluate } = counting();
  const a = new ScheduleEnv(space, evaluate, { seed: 3 });
  const b = new ScheduleEnv(space, evaluate, { seed: 3 });
  for (let i = 0; i < 5; i++) assert.deepEqual([...a.reset()], [...b.reset()]);
  assert.throws(() => new ScheduleEnv(space, evaluate, { horizon: 0 }), RangeError);
  // deno-lint-ignore no-explicit-any
  assert.throws(() => new ScheduleEnv(space, evaluate, { reward: "speed" as any }), RangeError);
  assert.throws(() => a.prepare([0, 0]), /3 components/);
});

Deno.test("fixed trace features extend the observation of a template's space", () => {
  const t = templateSpace("conv2d", createWorkload("conv2d", [1, 4, 8, 8, 4, 3, 3, 1, 1]));
  const env = new ScheduleEnv(t.space, () => [], { features: "fixed", candidateOf: t.candidateOf });
  assert.equal(env.observationSize, t.space.knobs.length + FIXED_FEATURE_NAMES.length + 1);
  const obs = env.reset("zeros");
  assert.ok(obs.some((x, i) => i >= t.space.knobs.length && x !== 0));
  assert.throws(() => new ScheduleEnv(space, () => [], { features: "fixed" }), /traces/);
});
