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

Deno.test("tune --race sets the racing factor, off unless given", () => {
  const base = ["--workload", "matmul", "--shape", "8,8,8"];
  assert.equal(parseTuneArgs(base).race, undefined);
  assert.equal(parseTuneArgs([...base, "--race", "2"]).race, 2);
  assert.throws(() => parseTuneArgs([...base, "--race", "0.5"]), /--race must be a factor >= 1/);
  assert.throws(() => parseTuneArgs([...base, "--race", "x"]), /--race must be a positive number/);
});
