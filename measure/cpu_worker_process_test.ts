import assert from "node:assert/strict";
import { referenceReadyLine } from "./protocol.ts";
import { classifyLine } from "./cpu_worker_process.ts";

Deno.test("classifyLine tells replies and progress lines of a request from other lines", () => {
  assert.equal(classifyLine(referenceReadyLine(3), 3), "reference-ready");
  assert.equal(classifyLine(referenceReadyLine(3), 4), "other");
  const reply = { id: 3, errorKind: "none", times: [1e-6], runSeconds: 0.1 };
  assert.equal(classifyLine(JSON.stringify(reply), 3), "reply");
  assert.equal(classifyLine(JSON.stringify({ ...reply, id: 2 }), 3), "other");
  assert.equal(classifyLine(JSON.stringify({ id: 3, phase: "some-future-phase" }), 3), "other");
  assert.equal(classifyLine(JSON.stringify({ id: 3 }), 3), "other");
  assert.equal(classifyLine("not json", 3), "other");
  assert.equal(classifyLine("null", 3), "other");
  assert.equal(classifyLine("[3]", 3), "other");
});
