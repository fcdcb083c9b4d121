import assert from "node:assert/strict";
import {
  evaluateRanking,
  kendallTau,
  pairwiseAccuracy,
  pickRegret,
  topKRecall,
} from "./metrics.ts";
import { throughputTargets } from "./learned.ts";

Deno.test("ranking metrics on perfect, reversed and partial orders", () => {
  const truth = [1, 2, 3, 4, 5];
  assert.equal(kendallTau(truth, truth), 1);
  assert.equal(kendallTau([5, 4, 3, 2, 1], truth), -1);
  assert.equal(pairwiseAccuracy([1, 2, 3, 5, 4], truth), 9 / 10);
  assert.equal(topKRecall([5, 1, 1, 1, 4], truth, 2), 0.5);
  assert.equal(pickRegret([0, 0, 0, 0, 1], truth), 0);
  assert.equal(pickRegret([1, 0, 0, 0, 0], truth), 1 - 1 / 5);
  const all = evaluateRanking(truth, truth);
  assert.equal(all.top1_recall, 1);
  assert.equal(all.pick_regret, 0);
});

Deno.test("kendall tau-b accounts for ties", () => {
  assert.ok(Math.abs(kendallTau([1, 1, 2], [1, 2, 3]) - 0.8165) < 1e-3);
});

Deno.test("throughput targets are normalised by the best and zero for failures", () => {
  const t = throughputTargets([
    { candidate: {}, seconds: 2 },
    { candidate: {}, seconds: 1 },
    { candidate: {} },
  ]);
  assert.deepEqual([...t], [0.5, 1, 0]);
});

Deno.test("throughput targets are normalised within each task when samples come from several", () => {
  const t = throughputTargets([
    { candidate: {}, seconds: 4 },
    { candidate: {}, seconds: 2 },
    { candidate: {}, seconds: 0.5, group: "small" },
    { candidate: {}, seconds: 0.25, group: "small" },
    { candidate: {}, group: "small" },
  ]);
  // Without groups the small task's 0.25 s would be the best of all and the own task's 2 s at 0.125.
  assert.deepEqual([...t], [0.5, 1, 0.5, 1, 0]);
});
