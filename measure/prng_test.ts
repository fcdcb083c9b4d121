import assert from "node:assert/strict";
import { fillUniform, mulberry32 } from "./prng.ts";

Deno.test("mulberry32 is deterministic and uniform in [-1, 1)", () => {
  const a = mulberry32(7);
  const b = mulberry32(7);
  const values = Array.from({ length: 10_000 }, () => a());
  assert.deepEqual(values.slice(0, 5), Array.from({ length: 5 }, () => b()));
  assert.ok(values.every((v) => v >= -1 && v < 1));
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  assert.ok(Math.abs(mean) < 0.05, `mean ${mean}`);
  assert.notEqual(mulberry32(8)(), mulberry32(7)());
});

Deno.test("fillUniform fills arrays in order from one stream", () => {
  const [x, y] = [new Float32Array(3), new Float32Array(2)];
  fillUniform(3, [x, y]);
  const next = mulberry32(3);
  assert.deepEqual([...x, ...y], Array.from({ length: 5 }, () => Math.fround(next())));
});
