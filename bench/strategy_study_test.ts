import assert from "node:assert/strict";
import type { CompareOutput } from "../search/comparison.ts";
import { studyTables } from "./strategy_study.ts";

const row = (strategy: string, budget: number, mean_fraction: number) => ({
  strategy,
  budget,
  mean_fraction,
  median_fraction: mean_fraction,
  p25: mean_fraction,
  p75: mean_fraction,
  mean_evals: budget,
  seeds: 2,
});
const run = (scores: Record<string, number>, fraction: number): CompareOutput => ({
  space: "k on d",
  spec: "sp",
  optimum: 1,
  results: Object.keys(scores).flatMap((n) => [row(n, 25, fraction), row(n, 50, fraction)]),
  reach: [],
  scores,
});

Deno.test("studyTables takes a strategy's row from the last run that has it, in its first place", () => {
  const md = studyTables([run({ random: 0, bo: -0.5 }, 0.4), run({ bo: 0.7 }, 0.9)]);
  const lines = md.split("\n").filter((l) => l.startsWith("| bo ") || l.startsWith("| random "));
  assert.deepEqual(lines.slice(0, 2), [
    "| random | 0.400 | 0.400 | 0.000 |",
    "| bo | 0.900 | 0.900 | 0.700 |",
  ]);
  assert.equal(md.split("\n").filter((l) => l.startsWith("| bo | 0.400")).length, 0);
});
