import assert from "node:assert/strict";
import { join } from "node:path";
import { RecordsDB } from "./db.ts";
import { importKernelTunerCache } from "./import.ts";

Deno.test("importKernelTunerCache records an entry with time 0 ms as an invalid runtime_error", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "zero_Test.json");
    await Deno.writeTextFile(
      path,
      JSON.stringify({
        device_name: "Test GPU",
        kernel_name: "zero",
        problem_size: 8,
        tune_params_keys: ["x"],
        tune_params: { x: [1, 2] },
        objective: "time",
        cache: { "1": { time: 0 }, "2": { time: 2 } },
      }),
    );
    const db = RecordsDB.open(join(dir, "kt.db"));
    try {
      const s = await importKernelTunerCache(db, path);
      assert.equal(s.errors, 1);
      const results = db.candidates(s.runId).map((c) => c.result!);
      assert.deepEqual(results.map((r) => r.errorKind), ["runtime_error", "none"]);
      assert.equal(results[0].error, "time 0 ms is not positive");
      assert.deepEqual(results[0].times, []);
      assert.equal(results[1].seconds, 0.002);
    } finally {
      db.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
