import assert from "node:assert/strict";
import { cpuModel, describeMachine } from "./machine.ts";

Deno.test("the machine description names the CPU model on Linux, without --allow-all", () => {
  const m = describeMachine();
  assert.equal(m.cores, navigator.hardwareConcurrency);
  if (Deno.build.os === "linux") {
    // The test task runs without --allow-all, under which /proc/cpuinfo is not readable.
    assert.notEqual(cpuModel(), "unknown");
    assert.equal(m.cpu, cpuModel());
  }
});
