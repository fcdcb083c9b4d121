import assert from "node:assert/strict";
import { createReplayMeasurer, recordTable } from "./replay.ts";

const table = recordTable([
  [[0], { errorKind: "none", seconds: 3e-3 }],
  [[1], { errorKind: "compile_host", error: "CompilationFailedConfig" }],
]);

Deno.test("createReplayMeasurer() answers each candidate from the table, in batch order", async () => {
  const m = createReplayMeasurer(table, { name: "replay:test" });
  const arrived: number[] = [];
  const rs = await m.measure([{ knobs: [1] }, { knobs: [0] }, { knobs: [2] }], {
    onResult: (i) => arrived.push(i),
  });
  assert.equal(m.name, "replay:test");
  assert.deepEqual(arrived, [0, 1, 2]);
  assert.deepEqual(rs[1], { errorKind: "none", times: [3e-3], buildSeconds: 0, runSeconds: 0 });
  assert.deepEqual(rs[0], {
    errorKind: "compile_host",
    error: "CompilationFailedConfig",
    times: [],
    buildSeconds: 0,
    runSeconds: 0,
  });
  assert.equal(rs[2].errorKind, "instantiation_error");
  assert.match(rs[2].error!, /not in the recorded data/);
});

Deno.test("createReplayMeasurer() rejects a candidate without knobs", async () => {
  const m = createReplayMeasurer(table);
  await assert.rejects(m.measure([{ knobs: [0] }, {}]), /replays knob vectors/);
});

Deno.test("recordTable() keeps the last entry of a knob vector and answers `missing` for others", () => {
  const t = recordTable(
    [[[0], { errorKind: "runtime_error" }], [[0], { errorKind: "none", seconds: 1 }]],
    { errorKind: "run_timeout" },
  );
  assert.deepEqual(t.get([0]), { errorKind: "none", seconds: 1 });
  assert.deepEqual(t.get([5]), { errorKind: "run_timeout" });
});
