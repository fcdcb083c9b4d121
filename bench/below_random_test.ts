import assert from "node:assert/strict";
import { exactRandom } from "./below_random.ts";

Deno.test("exactRandom rises with the budget and is 1 once the whole space is drawn", async () => {
  const r = await exactRandom("resnet18_conv1_cpu", [1, 25, 100, 252]);
  assert.ok(r.get(1)! < r.get(25)! && r.get(25)! < r.get(100)!);
  assert.ok(Math.abs(r.get(252)! - 1) < 1e-9);
});
