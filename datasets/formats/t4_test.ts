import { replayMeasurer } from "../../measure/replay.ts";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RecordsDB } from "../db.ts";
import { sqliteRecordStore } from "../record_store.ts";
import { exportRecords } from "../export.ts";
import { KERNELTUNER_DIR, readKernelTunerCache } from "../kerneltuner.ts";
import { replaySpace, replaySpaceFromFile } from "../../search/replay.ts";
import { knobKey, runStrategy } from "../../tuner/run_strategy.ts";
import { createStrategy } from "../../tuner/strategies.ts";
import { cacheOfT4, isT4, t4OfCache } from "./t4.ts";

// The issue's ../shared/data beside the repository; worktrees find it at /work/shared.
const TWIN = fileURLToPath(
  new URL("../../../shared/data/kerneltuner/convolution_A100_T4.json.gz", import.meta.url),
);
const SHARED_TWIN = "/work/shared/data/kerneltuner/convolution_A100_T4.json.gz";
const twin = existsSync(TWIN) ? TWIN : SHARED_TWIN;

Deno.test({
  name: "the hub's T4 twin of convolution_A100 replays to the cache's records and timing",
  ignore: !existsSync(twin),
  fn: async () => {
    const kt = replaySpace(
      await readKernelTunerCache(join(KERNELTUNER_DIR, "convolution_A100.json.gz")),
    );
    const t4 = replaySpace(await readKernelTunerCache(twin));
    assert.deepEqual(t4.cache.tuneParamsKeys, kt.cache.tuneParamsKeys);
    assert.deepEqual(t4.cache.tuneParams, kt.cache.tuneParams);
    assert.equal(t4.space.size, kt.space.size);
    assert.equal(t4.validCount, kt.validCount);
    assert.equal(t4.optimum, kt.optimum);
    let timed = 0;
    for (let i = 0; i < kt.space.size; i++) {
      const a = kt.evaluateIndex(i), b = t4.evaluateIndex(i);
      assert.equal(b.errorKind, a.errorKind, `index ${i}`);
      if (a.seconds !== undefined) {
        assert.ok(Math.abs(b.seconds! - a.seconds) < 1e-12, `index ${i}`);
      }
      const ea = kt.entryOf(i), eb = t4.entryOf(i);
      assert.equal(eb === undefined, ea === undefined);
      if (!ea || !eb) continue;
      assert.deepEqual(eb.times, ea.times);
      assert.equal(eb.timing?.compile, ea.timing?.compile);
      assert.equal(eb.timing?.framework, ea.timing?.framework);
      assert.equal(eb.timing?.verification, ea.timing?.verification);
      timed++;
    }
    assert.equal(timed, kt.cache.cache.size);
  },
});

Deno.test("T4 reading: time units, failures, constraint violations and a missing time", () => {
  const result = (x: number, time: unknown, invalidity = "correct", runtimes?: number[]) => ({
    timestamp: "2025-01-01",
    configuration: { x, y: "a" },
    times: { compilation: 2, framework: 0.5, ...(runtimes ? { runtimes } : {}) },
    invalidity,
    correctness: invalidity === "correct" ? 1 : 0,
    measurements: time === undefined ? [] : [{ name: "time", value: time, unit: "" }],
  });
  const data = {
    schema_version: "1.0.0",
    metadata: { timeunit: "s" },
    results: [
      result(4, 0.002, "correct", [0.002, 0.002]),
      result(1, "CompilationFailedConfig", "compile"),
      result(2, undefined, "correct", [0.001, 0.003]),
      result(3, "InvalidConfig", "constraints"),
    ],
  };
  assert.ok(isT4(data));
  const c = cacheOfT4(data, "/x/kern_GPU9_T4.json");
  assert.equal(c.kernelName, "kern");
  assert.equal(c.deviceName, "GPU9");
  assert.deepEqual(c.tuneParamsKeys, ["x", "y"]);
  assert.deepEqual(c.tuneParams.x, [1, 2, 4]); // 3 only violates a constraint: not in the space
  assert.equal(c.cache.get("4,a")!.time, 2); // seconds to milliseconds
  assert.deepEqual(c.cache.get("4,a")!.times, [2, 2]);
  assert.equal(c.cache.get("4,a")!.timing!.compile, 2000);
  assert.equal(c.cache.get("1,a")!.time, "CompilationFailedConfig");
  assert.equal(c.cache.get("2,a")!.time, 2); // mean of the runtimes
  assert.equal(c.cache.has("3,a"), false);
  assert.throws(
    () => cacheOfT4({ ...data, metadata: { timeunit: "fortnights" } }, "f.json"),
    /timeunit.*unknown time unit "fortnights"/,
  );
  assert.throws(() => cacheOfT4({ results: [] }, "e.json"), /no configuration/);
  assert.throws(() => cacheOfT4({ results: [{ configuration: 3 }] }, "e.json"), /configuration/);
});

Deno.test("t4OfCache writes the parts of the time and the space, and reads back", () => {
  const t4 = t4OfCache({
    kernel_name: "k",
    device_name: "D",
    problem_size: [8],
    tune_params_keys: ["x"],
    tune_params: { x: [1, 2, 3] },
    objective: "time",
    cache: {
      "1": {
        x: 1,
        time: 5,
        times: [4, 6],
        compile_time: 10,
        benchmark_time: 11,
        framework_time: 1,
      },
      "3": { x: 3, time: "RuntimeFailedConfig", compile_time: 9 },
    },
  });
  const results = t4.results as Record<string, Record<string, unknown>>[];
  assert.deepEqual(results[0].times, {
    compilation: 10,
    framework: 1,
    search_algorithm: 0,
    validation: 0,
    runtimes: [4, 6],
    benchmark: 11,
  });
  assert.equal(results[1].invalidity, "runtime");
  const back = cacheOfT4(JSON.parse(JSON.stringify(t4)), "k.json");
  assert.deepEqual(back.tuneParams.x, [1, 2, 3]); // the declared space, 2 included
  assert.equal(back.deviceName, "D");
  assert.equal(back.cache.get("1")!.timing!.benchmark, 11);
  assert.throws(() => t4OfCache({ tune_params_keys: [] }), /cache\.cache must be an object/);
});

Deno.test("a T4 export of a replayed run reads back as a space that replays to the same records", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tunebook_t4_" });
  try {
    const source = await replaySpaceFromFile("pnpoly_RTX_3090");
    const db = RecordsDB.open(join(dir, "r.db"));
    const store = sqliteRecordStore(db);
    const knobSpace = source.cache.tuneParamsKeys.map((k) => ({
      name: k,
      kind: "other",
      options: source.cache.tuneParams[k],
    }));
    const run = async (r: typeof source) => {
      const strategy = await createStrategy("ga", r.space, { seed: 7, candidateOf: r.candidateOf });
      return await runStrategy(strategy, replayMeasurer(r), {
        budget: 60,
        store,
        keyOf: knobKey,
        run: { strategy: "ga", seed: 7, trials: 60, config: { knobSpace } },
      });
    };
    await run(source);
    const [first] = db.runs();
    const out = join(dir, "pnpoly_T4.json");
    await exportRecords(db, "t4", out, { runs: [first.id] });
    const back = await replaySpaceFromFile(out);
    assert.deepEqual(back.cache.tuneParams, source.cache.tuneParams);
    const a = db.candidates(first.id);
    for (const c of a) {
      const r = back.evaluate(c.knobs!);
      assert.equal(r.errorKind, c.result!.errorKind);
      if (c.result!.seconds !== null) assert.ok(Math.abs(r.seconds! - c.result!.seconds) < 1e-15);
    }
    // The same strategy and seed on the exported space: the same evaluations and results.
    await run(back);
    const second = db.runs().at(-1)!;
    const b = db.candidates(second.id);
    assert.deepEqual(b.map((c) => c.knobs), a.map((c) => c.knobs));
    assert.deepEqual(b.map((c) => c.result!.errorKind), a.map((c) => c.result!.errorKind));
    assert.deepEqual(b.map((c) => c.result!.times), a.map((c) => c.result!.times));
    // The recorded compile seconds travel with the records and back.
    assert.deepEqual(b.map((c) => c.result!.buildSeconds), a.map((c) => c.result!.buildSeconds));
    assert.ok(a.some((c) => c.result!.buildSeconds > 0));
    db.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
