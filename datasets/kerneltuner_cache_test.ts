import assert from "node:assert/strict";
import { KernelTunerError } from "./kerneltuner_json.ts";
import { cacheStats, deviceOf, KERNELTUNER_DIR, validateCache } from "./kerneltuner_cache.ts";

const TWO = {
  device_name: "",
  kernel_name: "k",
  problem_size: 1024,
  tune_params_keys: ["a"],
  tune_params: { a: [1, 2, 4] },
  objective: "time",
  cache: { "1": { time: 1.5 }, "2": { time: "CompilationFailedConfig", times: [] } },
};

Deno.test("validateCache turns parsed cache JSON into keyed entries without reading a file", () => {
  const c = validateCache(TWO, "/x/conv_MI250X.json");
  assert.equal(c.file, "/x/conv_MI250X.json");
  assert.equal(c.problemSize, 1024);
  assert.deepEqual([...c.cache.keys()], ["1", "2"]);
  assert.deepEqual(c.cache.get("1"), { time: 1.5 });
  assert.deepEqual(c.cache.get("2"), { time: "CompilationFailedConfig", times: [] });
  assert.throws(() => validateCache({ ...TWO, objective: 3 }, "f.json"), (e: unknown) => {
    assert.ok(e instanceof KernelTunerError);
    assert.equal(e.field, "objective");
    assert.equal(e.message, 'f.json: field "objective": expected a string, got number 3');
    return true;
  });
});

Deno.test("cacheStats counts error markers as invalid entries", () => {
  assert.deepEqual(cacheStats(validateCache(TWO, "t.json")), {
    parameters: 1,
    cartesianSize: 3,
    entries: 2,
    invalid: 1,
  });
});

Deno.test("deviceOf falls back to the file name after the kernel's when device_name is empty", () => {
  assert.equal(deviceOf(validateCache(TWO, "/x/conv_MI250X.json.gz")), "MI250X");
  assert.equal(deviceOf(validateCache(TWO, "/x/noseparator.json")), "unknown device");
  assert.equal(deviceOf(validateCache({ ...TWO, device_name: "A100" }, "/x/c_B.json")), "A100");
});

Deno.test("KERNELTUNER_DIR is the repository's data/kerneltuner/ folder", () => {
  assert.ok(KERNELTUNER_DIR.endsWith("/data/kerneltuner/"), KERNELTUNER_DIR);
  assert.ok(Deno.statSync(KERNELTUNER_DIR).isDirectory);
});
