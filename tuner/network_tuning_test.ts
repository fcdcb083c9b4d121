import assert from "node:assert/strict";
import { depthwiseConv2d } from "../ir/nn.ts";
import { conv2d, matmul } from "../ir/workloads.ts";
import { defaultPerRound, taskStrategy } from "./network_tuning.ts";

Deno.test("taskStrategy takes the first given template that schedules the task, else its default one", () => {
  const c = conv2d(1, 8, 8, 8, 8, 3, 3, 1, 1);
  assert.equal(
    taskStrategy("xgb", c, 1, ["matmul-packed", "conv2d-packed"]).name,
    "xgb conv2d-packed",
  );
  assert.equal(taskStrategy("ga", c, 1).name, "ga conv2d");
  assert.equal(taskStrategy("ga", matmul(8, 8, 8), 1, ["conv2d-packed"]).name, "ga matmul");
  assert.equal(taskStrategy("evolutionary", c, 1).name, "evolutionary");
});

Deno.test("taskStrategy falls back to random on a workload no template schedules (depthwise)", () => {
  const s = taskStrategy("xgb", depthwiseConv2d(1, 8, 8, 8, 3, 3, 1, 1), 1, ["conv2d-packed"]);
  assert.equal(s.name, "random");
  assert.equal(s.strategy.propose(2).length, 2);
});

Deno.test("defaultPerRound leaves every task two rounds of the budget, between 1 and 8 trials", () => {
  assert.equal(defaultPerRound(64, 12), 2);
  assert.equal(defaultPerRound(5, 12), 1);
  assert.equal(defaultPerRound(10_000, 3), 8);
});
