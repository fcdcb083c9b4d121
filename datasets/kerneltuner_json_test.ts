import assert from "node:assert/strict";
import { join } from "node:path";
import {
  describe,
  isRecord,
  isScalar,
  KernelTunerError,
  readKernelTunerJSON,
} from "./kerneltuner_json.ts";

Deno.test("KernelTunerError joins the file, the field and the detail that are given", () => {
  const both = new KernelTunerError("bad", { file: "a.json", field: "x.y" });
  assert.equal(both.message, 'a.json: field "x.y": bad');
  assert.equal(both.file, "a.json");
  assert.equal(both.field, "x.y");
  assert.equal(both.name, "KernelTunerError");
  assert.equal(new KernelTunerError("bad", { field: "x" }).message, 'field "x": bad');
  assert.equal(new KernelTunerError("bad", { file: "" }).message, "bad");
  const cause = new Error("inner");
  assert.equal(new KernelTunerError("bad", { cause }).cause, cause);
});

Deno.test("isRecord and isScalar accept JSON objects and finite scalars only", () => {
  assert.equal(isRecord({}), true);
  assert.equal(isRecord(null), false);
  assert.equal(isRecord([]), false);
  assert.deepEqual([1, "s", false].map(isScalar), [true, true, true]);
  assert.deepEqual([NaN, Infinity, null, undefined, [1], {}].map(isScalar), [
    false,
    false,
    false,
    false,
    false,
    false,
  ]);
});

Deno.test("describe names the type and cuts a long scalar at 40 characters", () => {
  assert.equal(describe(undefined), "nothing (the field is missing)");
  assert.equal(describe(null), "null");
  assert.equal(describe([1]), "a list");
  assert.equal(describe({ a: 1 }), "an object");
  assert.equal(describe(3), "number 3");
  assert.equal(describe("x".repeat(50)), `string "${"x".repeat(39)}…`);
});

Deno.test("readKernelTunerJSON returns any JSON unvalidated and names the file on errors", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tunebook_ktjson_" });
  try {
    await Deno.writeTextFile(join(dir, "list.json"), "[1, 2]");
    assert.deepEqual(await readKernelTunerJSON(join(dir, "list.json")), [1, 2]);
    await Deno.writeTextFile(join(dir, "bad.json"), "{");
    await assert.rejects(readKernelTunerJSON(join(dir, "bad.json")), (e: unknown) => {
      assert.ok(e instanceof KernelTunerError);
      assert.equal(e.file, join(dir, "bad.json"));
      assert.match(e.message, /not valid JSON/);
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
