import assert from "node:assert/strict";
import { NoWorkerError, pickMachine } from "./remote_measurer.ts";
import type { Announcement } from "./machine.ts";

const a = (over: Partial<Announcement>): string =>
  JSON.stringify({
    target: "cpu",
    cpu: "EPYC",
    gpu: null,
    compiler: "gcc",
    version: "1.0",
    key: "cpu-aaa",
    queue: "q-aaa",
    host: "h",
    pid: 1,
    lastSeen: Date.now(),
    ...over,
  });
const o = { target: "cpu", version: "1.0", staleMs: 30_000, display: "redis://r:1" };

Deno.test("pickMachine() picks the one machine of the target and version", () => {
  const m = pickMachine([a({}), a({ pid: 2 }), a({ target: "cuda", key: "cuda-b" })], o);
  assert.equal(m.key, "cpu-aaa");
});

Deno.test("pickMachine() ignores stale announcements and says when workers run another version", () => {
  assert.throws(
    () => pickMachine([a({ lastSeen: Date.now() - 60_000 }), a({ version: "0.9" })], o),
    (e: Error) =>
      e instanceof NoWorkerError && /workers of tunebook 0.9 refuse its jobs/.test(e.message) &&
      /deno task worker --queue redis:\/\/r:1/.test(e.message),
  );
});

Deno.test("pickMachine() asks for --machine when several machines are announced, and obeys it", () => {
  const two = [a({}), a({ key: "cpu-bbb", queue: "q-bbb" })];
  assert.throws(() => pickMachine(two, o), /several cpu machines.*--machine KEY/);
  assert.equal(pickMachine(two, { ...o, key: "cpu-bbb" }).queue, "q-bbb");
});
