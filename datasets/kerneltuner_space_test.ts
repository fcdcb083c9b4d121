import assert from "node:assert/strict";
import { join } from "node:path";
import { KernelTunerError } from "./kerneltuner_json.ts";
import { readSpaceFile } from "./kerneltuner_space.ts";

async function withSpaceFile(
  name: string,
  data: unknown,
  fn: (path: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tunebook_ktspace_" });
  try {
    const path = join(dir, name);
    await Deno.writeTextFile(path, JSON.stringify(data));
    await fn(path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const SPACE = {
  ConfigurationSpace: {
    TuningParameters: [
      { Name: "bx", Type: "int", Values: "[2**i for i in range(3, 7)]", Default: 32 },
      { Name: "by", Type: "int", Values: [1, 2, 4] },
    ],
    Conditions: [{ Expression: "bx * by <= 128", Parameters: ["bx", "by"] }],
  },
  KernelSpecification: { KernelName: "tiny_kernel" },
};

Deno.test("readSpaceFile evaluates Values expressions and compiles the conditions", async () => {
  await withSpaceFile("tiny_milo.json", SPACE, async (path) => {
    const s = await readSpaceFile(path);
    assert.equal(s.file, path);
    assert.equal(s.name, "tiny_milo"); // no General.BenchmarkName: the file name
    assert.equal(s.kernelName, "tiny_kernel");
    assert.deepEqual(s.parameters[0], {
      name: "bx",
      type: "int",
      values: [8, 16, 32, 64],
      default: 32,
    });
    assert.deepEqual(s.parameters[1], { name: "by", type: "int", values: [1, 2, 4] });
    assert.equal(s.cartesianSize, 12);
    assert.deepEqual(s.restrictions, ["bx * by <= 128"]);
    assert.deepEqual(s.conditions, [{ expression: "bx * by <= 128", parameters: ["bx", "by"] }]);
    assert.equal(s.isValid({ bx: 64, by: 2 }), true);
    assert.equal(s.isValid({ bx: 64, by: 4 }), false);
  });
});

Deno.test("readSpaceFile rejects a condition naming an undefined parameter", async () => {
  const bad = {
    ConfigurationSpace: {
      ...SPACE.ConfigurationSpace,
      Conditions: [{ Expression: "bz > 1", Parameters: [] }],
    },
  };
  await withSpaceFile("bad.json", bad, async (path) => {
    await assert.rejects(readSpaceFile(path), (e: unknown) => {
      assert.ok(e instanceof KernelTunerError);
      assert.equal(e.field, "ConfigurationSpace.Conditions[0].Expression");
      assert.match(e.message, /unknown name "bz"/);
      return true;
    });
  });
});
