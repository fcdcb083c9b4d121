import assert from "node:assert/strict";
import { exactRandom, latestRows } from "./below_random.ts";

Deno.test("exactRandom rises with the budget and is 1 once the whole space is drawn", async () => {
  const r = await exactRandom("resnet18_conv1_cpu", [1, 25, 100, 252]);
  assert.ok(r.get(1)! < r.get(25)! && r.get(25)! < r.get(100)!);
  assert.ok(Math.abs(r.get(252)! - 1) < 1e-9);
});

Deno.test("latestRows takes each strategy's rows from the last run that has it", () => {
  const row = (strategy: string, budget: number, f: number) => ({
    strategy,
    budget,
    mean_fraction: f,
  });
  const out = latestRows([
    { spec: "a", results: [row("bo", 25, 0.1), row("bo", 50, 0.2), row("sa", 25, 0.3)] },
    { spec: "b", results: [row("bo", 25, 0.4)] },
    { spec: "a", results: [row("bo", 25, 0.8), row("bo", 50, 0.9)] },
  ]);
  assert.deepEqual(out.map((s) => s.spec), ["a", "b"]);
  assert.deepEqual(out[0].results.map((r) => [r.strategy, r.mean_fraction]), [
    ["bo", 0.8],
    ["bo", 0.9],
    ["sa", 0.3],
  ]);
  assert.equal(out[1].results.length, 1);
});
