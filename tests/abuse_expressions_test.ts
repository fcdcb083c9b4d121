/**
 * Abuse tests of issue 41, item 8: a Kernel Tuner space file whose
 * restriction nests 100k parentheses deep, or whose values or restriction
 * make a list of 10^7 items, is refused with an `ExpressionError` naming the
 * limit (`ir/limits.ts`), instead of overflowing the stack or evaluating
 * for seconds.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { KernelTunerError } from "../datasets/kerneltuner_json.ts";
import { readSpaceFile } from "../datasets/kerneltuner_space.ts";
import { ExpressionError } from "../datasets/restrictions.ts";

/** A space file with `values` for `bx` and one condition `expression`. */
async function spaceFile(values: unknown, expression: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "tb-abuse-expr-" });
  const path = join(dir, "abuse_milo.json");
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      ConfigurationSpace: {
        TuningParameters: [{ Name: "bx", Type: "int", Values: values }],
        Conditions: [{ Expression: expression, Parameters: ["bx"] }],
      },
      KernelSpecification: { KernelName: "abuse" },
    }),
  );
  return path;
}

/** Reads `path` and asserts the refusal: a KernelTunerError caused by an ExpressionError. */
async function assertRefused(path: string, limit: RegExp): Promise<void> {
  try {
    await assert.rejects(readSpaceFile(path), (e: unknown) => {
      assert.ok(e instanceof KernelTunerError, String(e));
      const cause = (e as Error).cause ?? e;
      assert.ok(cause instanceof ExpressionError, `caused by ${cause}`);
      assert.match(e.message, limit);
      assert.ok(e.message.length < 1000, `a short message, got ${e.message.length} characters`);
      return true;
    });
  } finally {
    await Deno.remove(join(path, ".."), { recursive: true });
  }
}

Deno.test("a restriction with 100k nested parentheses is an ExpressionError, not a stack overflow", async () => {
  const deep = "(".repeat(100_000) + "bx > 1" + ")".repeat(100_000);
  await assertRefused(await spaceFile([1, 2], deep), /"expression nesting depth" of 200/);
  const negations = "not ".repeat(100_000) + "bx";
  await assertRefused(await spaceFile([1, 2], negations), /"expression nesting depth" of 200/);
});

/** Reads the space at `path` and asserts that checking a point is refused naming `limit`. */
async function assertPointRefused(path: string, limit: RegExp): Promise<void> {
  try {
    const space = await readSpaceFile(path); // compiled when read, evaluated per point
    assert.throws(() => space.isValid({ bx: 1 }), (e: unknown) => {
      assert.ok(e instanceof ExpressionError, String(e));
      assert.match(e.message, limit);
      return true;
    });
  } finally {
    await Deno.remove(join(path, ".."), { recursive: true });
  }
}

Deno.test("sum([x for x in range(10**7)]) is refused by the list items limit, in values and restrictions", async () => {
  const items = /"expression list items" of 100,000/;
  await assertRefused(await spaceFile("[x for x in range(10**7)]", "bx > 0"), items);
  const restriction = "bx <= sum([x for x in range(10**7)])";
  await assertPointRefused(await spaceFile([1, 2], restriction), items);
});

Deno.test("a restriction that evaluates too long is refused by the steps limit", async () => {
  const restriction = "bx <= sum([sum([y for y in range(1000)]) for x in range(2000)])";
  const steps = /"expression evaluation steps" of 1,000,000/;
  await assertPointRefused(await spaceFile([1, 2], restriction), steps);
});
