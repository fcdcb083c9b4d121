import assert from "node:assert/strict";
import * as tf from "npm:@tensorflow/tfjs@4.22.0";
import { ppoAgent } from "./ppo.ts";

const obs = new Float32Array([0.5, 0.25, 0]);
const spec = { observationSize: 3, actionSizes: [3, 3] };
// Reward 1 when head 0 picks choice 2; head 1 is irrelevant.
const reward = (a: readonly number[]) => (a[0] === 2 ? 1 : 0);

function train(seed: number, steps: number) {
  const agent = ppoAgent(spec, { seed, rolloutSteps: 16, minibatch: 8 });
  const actions: string[] = [];
  for (let i = 0; i < steps; i++) {
    const action = agent.act(obs);
    actions.push(action.join(""));
    agent.learn({ observation: obs, action, reward: reward(action), next: obs, done: i % 4 === 3 });
  }
  return { agent, actions };
}

Deno.test("ppoAgent learns to prefer the rewarded choice of a head", () => {
  const { agent } = train(1, 320);
  const [p0] = agent.probabilities(obs);
  assert.ok(p0[2] > 0.8, `p(choice 2) = ${p0[2]}`);
  assert.equal(agent.updates, 20);
  assert.ok(Number.isFinite(agent.lastLoss));
  assert.deepEqual(agent.act(obs, { greedy: true })[0], 2);
  agent.dispose();
});

Deno.test("ppoAgent is deterministic given its seed", () => {
  const a = train(7, 48), b = train(7, 48), c = train(8, 48);
  assert.deepEqual(a.actions, b.actions);
  assert.notDeepEqual(a.actions, c.actions);
  assert.deepEqual(a.agent.probabilities(obs), b.agent.probabilities(obs));
  for (const x of [a, b, c]) x.agent.dispose();
});

Deno.test("ppoAgent keeps no tensors between steps and frees them all on dispose", () => {
  const before = tf.memory().numTensors;
  const { agent } = train(2, 16);
  const held = tf.memory().numTensors;
  for (let i = 0; i < 48; i++) {
    const action = agent.act(obs);
    agent.learn({ observation: obs, action, reward: reward(action), next: obs, done: false });
  }
  assert.equal(tf.memory().numTensors, held);
  agent.dispose();
  assert.equal(tf.memory().numTensors, before);
});

Deno.test("ppoAgent.act avoids actions when its policy offers others", () => {
  const agent = ppoAgent(spec, { seed: 3 });
  for (let i = 0; i < 20; i++) {
    const a = agent.act(obs, { avoid: (x) => x[0] !== 1 });
    assert.equal(a[0], 1);
  }
  // Every action avoided: the first sample is returned.
  assert.equal(agent.act(obs, { avoid: () => true }).length, 2);
  assert.throws(() => agent.act(new Float32Array(2)), RangeError);
  agent.dispose();
  assert.throws(() => agent.act(obs), /disposed/);
});
