import assert from "node:assert/strict";
import { replayLayer, trainAcrossSpaces } from "./transfer.ts";
import { dqnAgent } from "../rl/dqn.ts";
import { randomAgent } from "../rl/agent.ts";

Deno.test("trainAcrossSpaces trains one agent over replayed layers, with curves per layer", async () => {
  const layers = [
    await replayLayer("convolution_A100", "A100"),
    await replayLayer("convolution_A4000", "A4000"),
  ];
  let built = 0;
  const { agent, curves } = await trainAcrossSpaces(layers, (spec, seed) => {
    built++;
    return dqnAgent(spec, { seed, learningStarts: 16, trainEvery: 8 });
  }, { episodes: 3, seed: 1 });
  assert.equal(built, 1);
  assert.deepEqual(curves.map((c) => c.name), ["A100", "A4000"]);
  for (const c of curves) {
    assert.equal(c.episodes.length, 3);
    assert.ok(c.tuning.samples.length > 0 && c.tuning.samples.length <= 60);
    assert.ok(c.optimum! > 0 && c.optimum! <= c.tuning.best.at(-1)!);
    // Rewards are log-speedups over the optimum: never above 0.
    assert.ok(c.episodes.every((e) => e.maxReward <= 1e-9 && e.meanReward <= e.maxReward));
  }
  assert.ok((agent as ReturnType<typeof dqnAgent>).updates > 0);
  agent.dispose();
});

Deno.test("trainAcrossSpaces rejects layers of other shapes", async () => {
  const layers = [await replayLayer("convolution_A100"), await replayLayer("pnpoly_RTX_3090")];
  await assert.rejects(
    () => trainAcrossSpaces(layers, (spec) => randomAgent(spec), { episodes: 1 }),
    /has observations of/,
  );
  await assert.rejects(() => trainAcrossSpaces([], (spec) => randomAgent(spec), { episodes: 1 }));
});
