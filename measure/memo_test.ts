import assert from "node:assert/strict";
import type { Measurer, MeasureResult } from "./measurer.ts";
import { memoMeasurer } from "./memo.ts";

/** Knob x gives x ms; x = 9 loses its worker. Logs what it is asked to measure. */
function counting(log: number[]): Measurer {
  return {
    name: "counting",
    measure: (batch) => {
      log.push(...batch.map((c) => c.knobs![0]));
      return Promise.resolve(
        batch.map((c): MeasureResult =>
          c.knobs![0] === 9
            ? { errorKind: "worker_lost", times: [], buildSeconds: 0, runSeconds: 0 }
            : { errorKind: "none", times: [c.knobs![0] / 1e3], buildSeconds: 0, runSeconds: 0 }
        ),
      );
    },
  };
}

const key = (c: { knobs?: number[] }) => String(c.knobs);

Deno.test("memoMeasurer() measures each key once, across calls and within a batch", async () => {
  const log: number[] = [];
  const m = memoMeasurer(counting(log), key);
  const a = await m.measure([{ knobs: [1] }, { knobs: [2] }, { knobs: [1] }]);
  const b = await m.measure([{ knobs: [2] }, { knobs: [3] }]);
  assert.deepEqual(log, [1, 2, 3]);
  assert.deepEqual(a.map((r) => r.times[0]), [1e-3, 2e-3, 1e-3]);
  assert.deepEqual(b.map((r) => r.times[0]), [2e-3, 3e-3]);
  assert.equal(m.results.size, 3);
});

Deno.test("memoMeasurer() announces every result of a batch once, and keeps no transient one", async () => {
  const log: number[] = [];
  const m = memoMeasurer(counting(log), key);
  await m.measure([{ knobs: [4] }]);
  const announced: number[] = [];
  await m.measure([{ knobs: [4] }, { knobs: [9] }, { knobs: [5] }], {
    onResult: (i) => announced.push(i),
  });
  assert.deepEqual(announced.sort(), [0, 1, 2]);
  await m.measure([{ knobs: [9] }]);
  assert.deepEqual(log, [4, 9, 5, 9], "the lost worker's candidate is measured again");
});

Deno.test("memoMeasurer() answers a remembered result without measuring", async () => {
  const log: number[] = [];
  const m = memoMeasurer(counting(log), key);
  m.remember("7", { errorKind: "compile_host", times: [], buildSeconds: 1, runSeconds: 0 });
  const [r] = await m.measure([{ knobs: [7] }]);
  assert.equal(r.errorKind, "compile_host");
  assert.deepEqual(log, []);
});
