import assert from "node:assert/strict";
import { howItEnded, outputWithin } from "./subprocess.ts";

Deno.test("outputWithin returns a quick child's output and kills a slow one at the deadline", async () => {
  const quick = new Deno.Command("sh", { args: ["-c", "echo hi"], stdout: "piped" }).spawn();
  const q = await outputWithin(quick, 10);
  assert.equal(q.timedOut, false);
  assert.equal(new TextDecoder().decode(q.output.stdout), "hi\n");
  const start = performance.now();
  const slow = new Deno.Command("sleep", { args: ["30"] }).spawn();
  const s = await outputWithin(slow, 0.2);
  assert.equal(s.timedOut, true);
  assert.equal(s.output.success, false);
  assert.ok(performance.now() - start < 10_000);
});

Deno.test("howItEnded names the signal that stopped a child, or its exit status", async () => {
  const killed = await new Deno.Command("sh", { args: ["-c", "kill -ABRT $$"] }).output();
  assert.equal(howItEnded("sh", killed), "sh stopped by SIGABRT");
  const failed = await new Deno.Command("sh", { args: ["-c", "exit 4"] }).output();
  assert.equal(howItEnded("sh", failed), "sh exited with status 4");
});
