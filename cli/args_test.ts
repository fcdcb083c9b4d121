import assert from "node:assert/strict";
import { parseTuneArgs } from "./args.ts";

Deno.test("tune --overlap pipelines rounds only when asked", () => {
  const base = ["--workload", "matmul", "--shape", "8,8,8"];
  assert.equal(parseTuneArgs(base).overlap, false);
  assert.equal(parseTuneArgs([...base, "--overlap"]).overlap, true);
});
