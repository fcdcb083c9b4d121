/** trainAgent: RL training episodes through the tuning loop. */
import assert from "node:assert/strict";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import { randomAgent } from "../rl/agent.ts";
import { ScheduleEnv } from "../rl/env.ts";
import { ppoAgent } from "../rl/ppo.ts";
import { runEpisode } from "../rl/train.ts";
import { KnobSpace } from "../ir/knobs.ts";
import type { Candidate } from "../search/strategy.ts";
import { trainAgent } from "./train.ts";

// One knob of 9 options; the fastest is index 6.
const space = new KnobSpace([{ name: "x", kind: "other", options: [0, 1, 2, 3, 4, 5, 6, 7, 8] }]);
const evaluate = (cs: Candidate[]) =>
  cs.map((c) => ({
    candidate: c,
    errorKind: "none" as const,
    seconds: 1 + Math.abs(c.knobs![0] - 6),
  }));

Deno.test("trainAgent returns learning and tuning curves, and PPO learns to walk to the optimum", async () => {
  const env = new ScheduleEnv(space, evaluate, { start: "zeros", reward: "log-speedup" });
  const agent = ppoAgent({ observationSize: 2, actionSizes: [3] }, { seed: 2, rolloutSteps: 20 });
  const { episodes, tuning } = await trainAgent(env, agent, { episodes: 30 });
  assert.equal(episodes.length, 30);
  assert.deepEqual(episodes.map((e) => e.episode).slice(0, 3), [0, 1, 2]);
  assert.ok(episodes.every((e) => e.maxReward >= e.meanReward));
  assert.deepEqual(tuning.samples, tuning.samples.map((_, i) => i + 1));
  assert.equal(tuning.best.at(-1), 1);
  const first = episodes.slice(0, 5).reduce((a, e) => a + e.meanReward, 0);
  const last = episodes.slice(-5).reduce((a, e) => a + e.meanReward, 0);
  assert.ok(last > first, `mean reward ${first / 5} -> ${last / 5}`);
  const { rewards } = await runEpisode(env, agent, { start: "zeros", greedy: true, learn: false });
  assert.ok(rewards.slice(-5).every((r) => r === rewards.at(-1)), "the greedy walk settles");
  agent.dispose();
});

Deno.test("trainAgent stops at maxSamples", async () => {
  const env = new ScheduleEnv(space, evaluate, { horizon: 3 });
  const agent = randomAgent({ observationSize: 2, actionSizes: [3] }, { seed: 3 });
  const { episodes } = await trainAgent(env, agent, { episodes: 100, maxSamples: 4 });
  assert.ok(episodes.at(-1)!.samples >= 4 && episodes.length < 100);
});

Deno.test("trainAgent records each distinct measurement once in the store it is given", async () => {
  const env = new ScheduleEnv(space, evaluate, { horizon: 4, seed: 5 });
  const agent = randomAgent({ observationSize: 2, actionSizes: [3] }, { seed: 5 });
  const store = createMemoryRecordStore();
  const { tuning } = await trainAgent(env, agent, { episodes: 6, store });
  const [run] = await store.runs();
  assert.equal(run.status, "finished");
  const rows = await store.candidates(run.id);
  assert.equal(rows.length, env.samples);
  assert.equal(rows.length, tuning.samples.at(-1));
  assert.equal(new Set(rows.map((r) => r.knobs!.join())).size, rows.length);
  assert.ok(rows.every((r) => r.result?.seconds === 1 + Math.abs(r.knobs![0] - 6)));
});

Deno.test("trainAgent rejects an agent built for other shapes", async () => {
  const env = new ScheduleEnv(space, evaluate, { horizon: 3 });
  const wrong = randomAgent({ observationSize: 3, actionSizes: [3] });
  await assert.rejects(() => trainAgent(env, wrong, { episodes: 1 }), RangeError);
});
