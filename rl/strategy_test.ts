import assert from "node:assert/strict";
import { agentStrategy } from "./strategy.ts";
import { RL_STRATEGY_NAMES, rlStrategy } from "./presets.ts";
import { randomAgent } from "./agent.ts";
import { drive, OPTIMUM, single, small, smallValid, space } from "../search/_testing.ts";
import { createStrategy, STRATEGY_NAMES } from "../tuner/strategies.ts";

Deno.test("every RL strategy proposes valid, fresh points within the budget", () => {
  for (const name of RL_STRATEGY_NAMES) {
    const s = rlStrategy(name, space, { seed: 1 });
    const { evaluated, keys } = drive(s, { budget: 60, batch: 8 });
    assert.equal(evaluated.size, 60, name);
    assert.equal(new Set(keys).size, keys.length, `${name} proposed a measured point again`);
    assert.ok(s.agent, name);
    s.dispose();
  }
});

Deno.test("RL strategies are in the strategy table and reproducible by seed", async () => {
  for (const name of ["ppo", "dqn", "bandit", "bandit-linucb"]) {
    assert.ok(STRATEGY_NAMES.includes(name), name);
    const run = async () =>
      drive(await createStrategy(name, space, { seed: 3 }), { budget: 40 }).keys;
    assert.deepEqual(await run(), await run(), name);
  }
});

Deno.test("an RL strategy exhausts a small space, then proposes nothing", () => {
  for (const name of ["ppo", "bandit-linucb"]) {
    const s = rlStrategy(name, small, { seed: 2 });
    const { evaluated } = drive(s, { budget: 100, sp: small });
    assert.deepEqual([...evaluated].sort((a, b) => a - b), smallValid, name);
    assert.deepEqual(s.propose(4), []);
    s.dispose();
  }
  const one = rlStrategy("dqn", single, { seed: 0 });
  assert.equal(drive(one, { budget: 5, sp: single }).evaluated.size, 1);
  one.dispose();
});

Deno.test("without avoidRevisits the walk takes free steps on measured points", () => {
  const s = agentStrategy(space, {
    seed: 4,
    name: "walker",
    avoidRevisits: false,
    env: { start: "zeros", horizon: 5 },
    makeAgent: (spec, seed) => randomAgent(spec, { seed }),
  });
  const { evaluated } = drive(s, { budget: 30 });
  assert.equal(evaluated.size, 30);
  assert.ok(s.freeSteps > 0);
  assert.equal(s.env.samples, 30);
  assert.ok(s.env.best.seconds >= OPTIMUM);
});
