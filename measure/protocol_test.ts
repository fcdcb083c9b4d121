import assert from "node:assert/strict";
import { checkRequest } from "./protocol.ts";

const good = {
  id: 1,
  artifact: "/a.so",
  reference: "/r.so",
  signature: {
    buffers: [{ name: "x", size: 4, role: "input" }, { name: "y", size: 4, role: "output" }],
  },
  seed: 0,
  atol: 0,
  rtol: 0,
  timing: { number: 1, repeat: 3, minRepeatMs: 0, warmup: 1 },
};

Deno.test("checkRequest accepts a well-formed request", () => {
  assert.deepEqual(checkRequest(structuredClone(good)), good);
});

Deno.test("checkRequest keeps a racing cutoff and rejects a non-positive one", () => {
  assert.equal(checkRequest({ ...good, cutoffSeconds: 0.002 }).cutoffSeconds, 0.002);
  assert.throws(
    () => checkRequest({ ...good, cutoffSeconds: 0 }),
    /cutoffSeconds must be a positive/,
  );
  assert.throws(() => checkRequest({ ...good, cutoffSeconds: "1" }), /cutoffSeconds/);
});

Deno.test("checkRequest says what is wrong with a bad request", () => {
  assert.throws(() => checkRequest(null), /not a JSON object/);
  assert.throws(() => checkRequest({ ...good, artifact: 3 }), /artifact must be a string/);
  assert.throws(
    () => checkRequest({ ...good, timing: { ...good.timing, repeat: 0 } }),
    /timing\.repeat must be an integer >= 1/,
  );
  assert.throws(
    () =>
      checkRequest({ ...good, signature: { buffers: [{ name: "x", size: -1, role: "input" }] } }),
    /size must be an integer >= 0/,
  );
  assert.throws(
    () => checkRequest({ ...good, signature: { buffers: [good.signature.buffers[0]] } }),
    /no output buffer/,
  );
});
