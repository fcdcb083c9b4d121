import assert from "node:assert/strict";
import { withDefaults } from "./options.ts";

Deno.test("withDefaults fills what is missing or undefined and leaves the defaults alone", () => {
  const defaults = { a: 1, b: "x", c: [1, 2] };
  const o = withDefaults<{ a?: number; b?: string; c?: number[] }>(defaults, {
    a: 5,
    b: undefined,
  });
  assert.deepEqual(o, { a: 5, b: "x", c: [1, 2] });
  assert.deepEqual(defaults, { a: 1, b: "x", c: [1, 2] });
  assert.notEqual(o, defaults);
});
