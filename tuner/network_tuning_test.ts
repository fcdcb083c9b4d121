import assert from "node:assert/strict";
import { depthwiseConv2d } from "../ir/nn.ts";
import { conv2d, matmul } from "../ir/workloads.ts";
import { defaultPerRound, taskStrategy } from "./network_tuning.ts";

Deno.test("taskStrategy takes the first given template that schedules the task, else its default one", async () => {
  const c = conv2d(1, 8, 8, 8, 8, 3, 3, 1, 1);
  const name = async (s: string, w = c, templates?: string[]) =>
    (await taskStrategy(s, w, 1, templates)).name;
  assert.equal(await name("xgb", c, ["matmul-packed", "conv2d-packed"]), "xgb conv2d-packed");
  assert.equal(await name("ga"), "ga conv2d");
  assert.equal(await name("ga", matmul(8, 8, 8), ["conv2d-packed"]), "ga matmul");
  assert.equal(await name("ansor"), "ansor");
});

Deno.test("taskStrategy falls back to random on a workload no template schedules (depthwise)", async () => {
  const s = await taskStrategy("xgb", depthwiseConv2d(1, 8, 8, 8, 3, 3, 1, 1), 1, [
    "conv2d-packed",
  ]);
  assert.equal(s.name, "random");
  assert.equal(s.strategy.propose(2).length, 2);
});

Deno.test("defaultPerRound leaves every task two rounds of the budget, between 1 and 8 trials", () => {
  assert.equal(defaultPerRound(64, 12), 2);
  assert.equal(defaultPerRound(5, 12), 1);
  assert.equal(defaultPerRound(10_000, 3), 8);
});
