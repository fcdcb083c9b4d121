import assert from "node:assert/strict";
import { compareOutputs } from "./output_check.ts";

const f32 = (values: number[]) => Float32Array.from(values);

Deno.test("compareOutputs accepts values within atol + rtol * |ref|", () => {
  const report = compareOutputs(
    [{ name: "y", got: f32([1, 2.001, -3]), expected: f32([1, 2, -3]) }],
    0,
    1e-3,
  );
  assert.deepEqual(report, { bad: 0, total: 3, message: "" });
});

Deno.test("compareOutputs names the first bad element and counts all of them", () => {
  const report = compareOutputs(
    [
      { name: "x", got: f32([0, 0]), expected: f32([0, 0]) },
      { name: "y", got: f32([1, 5, NaN, 4]), expected: f32([1, 2, 3, 4]) },
    ],
    1e-6,
    1e-5,
  );
  assert.equal(report.bad, 2);
  assert.equal(report.total, 6);
  assert.match(report.message, /^output "y" index 1: got 5, expected 2; 2 of 6 elements wrong/);
  assert.match(report.message, /1 NaN, largest error 3,/);
});
