import assert from "node:assert/strict";
import { JobError, parseJob, parseResult } from "./job.ts";

const job = () => ({
  version: "0.1.0",
  trace: { version: 1, workload: { name: "matmul", shape: [8, 8, 8] }, insts: [] },
  options: {
    timing: { number: 1, repeat: 3, minRepeatMs: 0, warmup: 1 },
    timeoutSeconds: 10,
    inputSeed: 0,
  },
});

Deno.test("parseJob() accepts a trace with timing options and keeps a racing cutoff", () => {
  const j = parseJob({ ...job(), options: { ...job().options, cutoffSeconds: 0.5 } });
  assert.equal(j.trace.workload.name, "matmul");
  assert.equal(j.options.cutoffSeconds, 0.5);
});

Deno.test("parseJob() refuses a job carrying a command or a path, naming the field", () => {
  assert.throws(
    () => parseJob({ ...job(), command: "rm -rf /" }),
    /job has an unknown field command/,
  );
  assert.throws(
    () => parseJob({ ...job(), options: { ...job().options, artifact: "/tmp/x.so" } }),
    /options has an unknown field artifact/,
  );
  assert.throws(
    () => parseJob({ ...job(), options: { ...job().options, timing: { number: 1, cc: "sh" } } }),
    JobError,
  );
});

Deno.test("parseJob() names a bad field: trace, timing, timeout", () => {
  assert.throws(() => parseJob({ ...job(), trace: { version: 99 } }), /job field trace/);
  assert.throws(
    () => parseJob({ ...job(), options: { ...job().options, timeoutSeconds: -1 } }),
    /options.timeoutSeconds/,
  );
  assert.throws(() => parseJob({ ...job(), version: 1 }), /job field version/);
});

Deno.test("parseResult() reads a worker's JSON result and refuses an unknown error kind", () => {
  const r = parseResult(
    JSON.stringify({ errorKind: "none", times: [1e-3, 2e-3], buildSeconds: 0.1, runSeconds: 0.2 }),
  );
  assert.deepEqual(r.times, [1e-3, 2e-3]);
  assert.throws(() => parseResult({ errorKind: "boom", times: [] }), /errorKind/);
  assert.throws(() => parseResult({ errorKind: "none", times: ["x"] }), /times/);
});

Deno.test("parseJob() keeps a noisy-repeat spread and refuses one below 1", () => {
  const timing = { ...job().options.timing, noisySpread: 1.25 };
  const j = parseJob({ ...job(), options: { ...job().options, timing } });
  assert.equal(j.options.timing.noisySpread, 1.25);
  assert.equal(parseJob(job()).options.timing.noisySpread, undefined);
  assert.throws(
    () =>
      parseJob({
        ...job(),
        options: { ...job().options, timing: { ...timing, noisySpread: 0.5 } },
      }),
    /options\.timing\.noisySpread is not a number >= 1/,
  );
});
