import assert from "node:assert/strict";
import * as tf from "npm:@tensorflow/tfjs@4.22.0";
import { dqnAgent } from "./dqn.ts";

const obs = new Float32Array([1, 0]);
const spec = { observationSize: 2, actionSizes: [3, 4] };
// One-step episodes; the best action is [2, 1].
const reward = (a: readonly number[]) => -Math.abs(a[0] - 2) - Math.abs(a[1] - 1);

function train(seed: number, steps: number) {
  const agent = dqnAgent(spec, {
    seed,
    learningStarts: 16,
    batchSize: 16,
    trainEvery: 1,
    epsilonDecaySteps: steps / 2,
    learningRate: 5e-3,
    targetUpdate: 20,
  });
  const actions: string[] = [];
  for (let i = 0; i < steps; i++) {
    const action = agent.act(obs);
    actions.push(action.join(""));
    agent.learn({ observation: obs, action, reward: reward(action), next: obs, done: true });
  }
  return { agent, actions };
}

Deno.test("dqnAgent learns the best choice of every head (branching double DQN)", () => {
  const { agent } = train(1, 300);
  assert.deepEqual(agent.act(obs, { greedy: true }), [2, 1]);
  const q = agent.qValues(obs);
  assert.deepEqual(q.map((h) => h.length), [3, 4]);
  assert.ok(Math.abs(agent.epsilon - 0.05) < 1e-9);
  assert.ok(agent.updates > 200);
  agent.dispose();
});

Deno.test("dqnAgent is deterministic given its seed", () => {
  const a = train(5, 60), b = train(5, 60);
  assert.deepEqual(a.actions, b.actions);
  assert.deepEqual(a.agent.qValues(obs), b.agent.qValues(obs));
  a.agent.dispose();
  b.agent.dispose();
});

Deno.test("dqnAgent keeps no tensors between steps and frees them all on dispose", () => {
  const before = tf.memory().numTensors;
  const { agent } = train(2, 40);
  const held = tf.memory().numTensors;
  for (let i = 0; i < 40; i++) {
    const action = agent.act(obs);
    agent.learn({ observation: obs, action, reward: reward(action), next: obs, done: true });
  }
  assert.equal(tf.memory().numTensors, held);
  agent.dispose();
  assert.equal(tf.memory().numTensors, before);
});

Deno.test("dqnAgent.act avoids actions, greedy or exploring", () => {
  const { agent } = train(3, 300);
  const avoid = (a: readonly number[]) => a[0] === 2 && a[1] === 1;
  for (let i = 0; i < 10; i++) assert.ok(!avoid(agent.act(obs, { greedy: true, avoid })));
  assert.throws(() => dqnAgent(spec, { batchSize: 0 }), RangeError);
  agent.dispose();
});
