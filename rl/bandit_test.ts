import assert from "node:assert/strict";
import { linUCBAgent, ppoBandit } from "./bandit.ts";

const obs = new Float32Array(1);
const spec = { observationSize: 1, actionSizes: [5, 4, 2] };
const reward = (a: readonly number[]) =>
  -Math.abs(a[0] - 3) - 0.5 * Math.abs(a[1] - 1) + (a[2] === 1 ? 0.3 : 0);

Deno.test("linUCBAgent finds the best action of an additive reward, never repeating one", () => {
  const agent = linUCBAgent(spec, { seed: 1 });
  const tried = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const a = agent.act(obs, { avoid: (x) => tried.has(x.join()) });
    assert.ok(!tried.has(a.join()));
    tried.add(a.join());
    agent.learn({ observation: obs, action: a, reward: reward(a), next: obs, done: true });
  }
  assert.deepEqual(agent.act(obs, { greedy: true }), [3, 1, 1]);
  assert.deepEqual(agent.weights().map((w) => w.length), [5, 4, 2]);
});

Deno.test("linUCBAgent is deterministic given its seed and honours avoid", () => {
  const run = (seed: number) => {
    const agent = linUCBAgent(spec, { seed });
    const out: string[] = [];
    for (let i = 0; i < 20; i++) {
      const a = agent.act(obs, { avoid: (x) => x[0] === 0 });
      assert.notEqual(a[0], 0);
      out.push(a.join(""));
      agent.learn({ observation: obs, action: a, reward: reward(a), next: obs, done: true });
    }
    return out;
  };
  assert.deepEqual(run(4), run(4));
  assert.throws(() => linUCBAgent(spec, { ridge: 0 }), RangeError);
});

Deno.test("ppoBandit is PPO with gamma 0 and lambda 0 that learns the best arm", () => {
  const agent = ppoBandit(spec, { seed: 2, gamma: 0.99 });
  assert.equal(agent.name, "bandit");
  assert.equal(agent.options.gamma, 0);
  assert.equal(agent.options.lambda, 0);
  for (let i = 0; i < 320; i++) {
    const a = agent.act(obs);
    agent.learn({ observation: obs, action: a, reward: reward(a), next: obs, done: true });
  }
  assert.deepEqual(agent.act(obs, { greedy: true }), [3, 1, 1]);
  agent.dispose();
});
