import assert from "node:assert/strict";
import { KernelTunerError } from "./kerneltuner_json.ts";
import {
  compileExpression,
  compileRestrictions,
  ExpressionError,
  isTruthy,
} from "./restrictions.ts";
import { LIMITS } from "../ir/limits.ts";

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

Deno.test("nesting depth is bounded: at the limit an expression evaluates, past it ExpressionError", () => {
  const depth = LIMITS.expressionDepth.value;
  const parens = (n: number) => "(".repeat(n) + "x" + ")".repeat(n);
  assert.equal(compileExpression(parens(depth - 1)).evaluate({ x: 3 }), 3);
  const refused = (src: string) =>
    assert.throws(() => compileExpression(src), (e: unknown) => {
      assert.ok(e instanceof ExpressionError, String(e));
      assert.match(e.message, /over the limit "expression nesting depth" of 200/);
      return true;
    });
  refused(parens(depth));
  // Chains nest in the evaluator as deeply as parentheses do in the parser.
  assert.equal(compileExpression("1" + "+1".repeat(depth - 1)).evaluate({}), depth);
  refused("1" + "+1".repeat(depth));
  refused("-".repeat(depth + 1) + "1");
  refused("not ".repeat(depth + 1) + "1");
  refused("2" + "**2".repeat(depth + 1));
  refused("[".repeat(depth + 1) + "]".repeat(depth + 1));
});

Deno.test("a list past the items limit is refused before it is made: range, comprehension, +", () => {
  const items = LIMITS.expressionItems.value;
  const limit = /over the limit "expression list items" of 100,000/;
  assert.equal(compileExpression(`len(range(${items}))`).evaluate({}), items);
  assert.throws(() => compileExpression(`len(range(${items + 1}))`).evaluate({}), limit);
  assert.throws(() => compileExpression("sum([x for x in range(10**7)])").evaluate({}), limit);
  assert.throws(
    () => compileExpression("len(xs + xs)").evaluate({ xs: new Array(items).fill(1) }),
    limit,
  );
  assert.throws(
    () => compileExpression("[x for x in xs]").evaluate({ xs: new Array(items + 1).fill(1) }),
    limit,
  );
});

Deno.test("one evaluation's steps are bounded, and counted afresh on each evaluation", () => {
  const limit = /over the limit "expression evaluation steps" of 1,000,000/;
  // 2,000 lists of 1,000 items: 2 million steps, each list under the items limit.
  const heavy = compileExpression("sum([sum([y for y in range(1000)]) for x in range(2000)])");
  assert.throws(() => heavy.evaluate({}), (e: unknown) => {
    assert.ok(e instanceof ExpressionError);
    assert.match(e.message, limit);
    return true;
  });
  // 200 lists of 1,000: 400,000 steps; evaluated 5 times (2 million in all), each is within.
  const light = compileExpression("sum([sum([y for y in range(1000)]) for x in range(n)])");
  for (let i = 0; i < 5; i++) assert.equal(light.evaluate({ n: 200 }), 200 * 499500);
  assert.throws(
    () => compileExpression("x in xs").evaluate({ x: 0, xs: new Array(2e6).fill(1) }),
    limit,
  );
});

Deno.test("an ExpressionError quotes a long source cut short, with its length", () => {
  const src = "(".repeat(100_000) + "1" + ")".repeat(100_000);
  assert.throws(() => compileExpression(src), (e: unknown) => {
    assert.ok(e instanceof ExpressionError);
    assert.equal(e.expression, src); // the whole source stays on the error
    assert.ok(e.message.length < 400, `${e.message.length} characters`);
    assert.match(e.message, /\.\.\. \(200001 characters\)/);
    return true;
  });
});
