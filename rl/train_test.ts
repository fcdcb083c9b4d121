import assert from "node:assert/strict";
import { randomAgent } from "./agent.ts";
import { ScheduleEnv } from "./env.ts";
import { runEpisode } from "./train.ts";
import { KnobSpace } from "../ir/knobs.ts";
import type { Candidate } from "../search/strategy.ts";

// One knob of 9 options; the fastest is index 6.
const space = new KnobSpace([{ name: "x", kind: "other", options: [0, 1, 2, 3, 4, 5, 6, 7, 8] }]);
const evaluate = (cs: Candidate[]) =>
  cs.map((c) => ({
    candidate: c,
    errorKind: "none" as const,
    seconds: 1 + Math.abs(c.knobs![0] - 6),
  }));

Deno.test("runEpisode drives an agent for one horizon and checks its shapes", async () => {
  const env = new ScheduleEnv(space, evaluate, { horizon: 5 });
  const agent = randomAgent({ observationSize: 2, actionSizes: [3] }, { seed: 1 });
  const { rewards, infos } = await runEpisode(env, agent, { start: "zeros" });
  assert.equal(rewards.length, 5);
  assert.deepEqual(infos.map((i) => i.t), [1, 2, 3, 4, 5]);
  const wrong = randomAgent({ observationSize: 3, actionSizes: [3] });
  await assert.rejects(() => runEpisode(env, wrong), RangeError);
});
