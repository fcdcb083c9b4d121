import assert from "node:assert/strict";
import { KernelTunerError } from "./kerneltuner_json.ts";
import {
  compileExpression,
  compileRestrictions,
  ExpressionError,
  isTruthy,
} from "./restrictions.ts";

Deno.test("compileExpression lists free names once, in order of first use, not loop variables", () => {
  const e = compileExpression("b * a + b + sum([x * c for x in range(a)])");
  assert.deepEqual(e.names, ["b", "a", "c"]);
  assert.equal(e.source, "b * a + b + sum([x * c for x in range(a)])");
  assert.equal(e.evaluate({ a: 3, b: 2, c: 10 }), 2 * 3 + 2 + (0 + 10 + 20));
});

Deno.test("a compiled expression is parsed once and evaluates under many bindings", () => {
  const e = compileExpression("32 <= bx * by <= 1024");
  assert.deepEqual(
    [[16, 1], [32, 1], [32, 32], [64, 32]].map(([bx, by]) => e.evaluate({ bx, by })),
    [false, true, true, false],
  );
});

Deno.test("compileRestrictions holds only when every restriction holds", () => {
  const ok = compileRestrictions(["x > 1", "x % 2 == 0"]);
  assert.deepEqual([1, 2, 3, 4].map((x) => ok({ x })), [false, true, false, true]);
  assert.equal(compileRestrictions([])({}), true);
  assert.throws(() => compileRestrictions(["y > 1"], ["x"]), /unknown name "y"/);
});

Deno.test("isTruthy follows Python: 0, False, empty string and empty list are false", () => {
  assert.deepEqual([0, false, "", []].map(isTruthy), [false, false, false, false]);
  assert.deepEqual([1, -0.5, true, "0", [0]].map(isTruthy), [true, true, true, true, true]);
});

Deno.test("ExpressionError is a KernelTunerError carrying the source and the column", () => {
  assert.throws(() => compileExpression("a +* b"), (e: unknown) => {
    assert.ok(e instanceof ExpressionError);
    assert.ok(e instanceof KernelTunerError);
    assert.equal(e.name, "ExpressionError");
    assert.equal(e.expression, "a +* b");
    assert.equal(e.column, 4);
    assert.match(e.message, /^expression "a \+\* b": .* at column 4$/);
    return true;
  });
  assert.throws(() => compileExpression("1 // x").evaluate({ x: 0 }), (e: unknown) => {
    assert.ok(e instanceof ExpressionError);
    assert.equal(e.column, undefined);
    return true;
  });
});
