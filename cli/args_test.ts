import assert from "node:assert/strict";
import { parseTuneArgs } from "./args.ts";

Deno.test("tune --overlap pipelines rounds only when asked", () => {
  const base = ["--workload", "matmul", "--shape", "8,8,8"];
  assert.equal(parseTuneArgs(base).overlap, false);
  assert.equal(parseTuneArgs([...base, "--overlap"]).overlap, true);
});

Deno.test("tune --unity sets the candidates per compiler process and rejects nonsense", () => {
  const base = ["--workload", "matmul", "--shape", "8,8,8"];
  assert.equal(parseTuneArgs([...base, "--unity", "4"]).unity, 4);
  assert.throws(() => parseTuneArgs([...base, "--unity", "0"]), /--unity/);
});
