import assert from "node:assert/strict";
import { join } from "node:path";
import {
  KERNELTUNER_DIR,
  type KernelTunerCache,
  KernelTunerError,
  readKernelTunerCache,
  readSpaceFile,
  validateCache,
} from "../datasets/kerneltuner.ts";
import { createPrng } from "../ir/prng.ts";
import { replaySpace, replaySpaceFromFile, resolveCachePath } from "./replay.ts";
import { replayMeasurer } from "../measure/replay.ts";

const loaded = new Map<string, Promise<KernelTunerCache>>();
function cache(name: string): Promise<KernelTunerCache> {
  if (!loaded.has(name)) {
    loaded.set(name, readKernelTunerCache(join(KERNELTUNER_DIR, `${name}.json.gz`)));
  }
  return loaded.get(name)!;
}

function minTime(c: KernelTunerCache): number {
  let best = Infinity;
  for (const e of c.cache.values()) if (typeof e.time === "number") best = Math.min(best, e.time);
  return best;
}

/** Values of a point as the cache key "v1,v2,…". */
function keyOf(c: KernelTunerCache, point: number[]): string {
  return c.tuneParamsKeys.map((k, i) => String(c.tuneParams[k][point[i]])).join(",");
}

Deno.test("the optimum is the lowest time of the cache, in seconds", async () => {
  for (const name of ["pnpoly_RTX_3090", "convolution_A100"]) {
    const c = await cache(name);
    const r = replaySpace(c);
    assert.equal(r.optimum, minTime(c) / 1000);
    assert.deepEqual(r.evaluate(r.optimumPoint), { errorKind: "none", seconds: r.optimum });
    assert.equal(c.cache.get(keyOf(c, r.optimumPoint))?.time, minTime(c));
  }
  const r = replaySpace(await cache("pnpoly_RTX_3090"));
  assert.equal(r.name, "cn_pnpoly on NVIDIA GeForce RTX 3090");
  assert.equal(r.space.size, 4_092);
  assert.deepEqual(r.space.knobs.map((k) => [k.name, k.kind, k.options.length]), [
    ["between_method", "other", 4],
    ["block_size_x", "other", 31],
    ["tile_size", "other", 11],
    ["use_method", "other", 3],
  ]);
  assert.equal(r.validCount, 4_092 - 330);
  assert.equal(r.allowedCount, 4_092);
});

Deno.test("a replay space's measurer answers each point with the cache's time, as its evaluate does", async () => {
  const r = replaySpace(await cache("pnpoly_RTX_3090"));
  assert.equal(replayMeasurer(r).name, "replay:cn_pnpoly on NVIDIA GeForce RTX 3090");
  const points = [r.optimumPoint, ...Array.from({ length: 50 }, (_, i) => r.space.point(i * 80))];
  const results = await replayMeasurer(r).measure(points.map((knobs) => ({ knobs })));
  results.forEach((m, i) => {
    const e = r.evaluate(points[i]);
    assert.equal(m.errorKind, e.errorKind);
    assert.deepEqual(m.times, e.seconds === undefined ? [] : [e.seconds]);
  });
  assert.deepEqual(results[0].times, [r.optimum]);
  assert.ok(results.some((m) => m.errorKind !== "none"), "some sampled points are invalid");
});

Deno.test("every cached entry replays as recorded; error markers keep their name", async () => {
  const c = await cache("convolution_A100");
  const r = replaySpace(c);
  const kinds = new Map<string, number>();
  for (let i = 0; i < r.space.size; i++) {
    const p = r.space.point(i);
    const e = c.cache.get(keyOf(c, p));
    const got = r.evaluate(p);
    assert.deepEqual(r.evaluateIndex(i), got);
    kinds.set(got.errorKind, (kinds.get(got.errorKind) ?? 0) + 1);
    if (e === undefined) assert.equal(got.errorKind, "instantiation_error");
    else if (typeof e.time === "number") assert.equal(got.seconds, e.time / 1000);
    else {
      assert.equal(got.error, e.time);
      assert.equal(
        got.errorKind,
        e.time === "CompilationFailedConfig" ? "compile_host" : "runtime_error",
      );
    }
  }
  assert.deepEqual(Object.fromEntries(kinds), {
    none: 4_201,
    runtime_error: 155,
    compile_host: 6,
    instantiation_error: 10_240 - 4_362,
  });
  assert.equal(r.name, "convolution_kernel on NVIDIA A100-PCIE-40GB");
  assert.equal(replaySpace(await cache("convolution_MI250X")).name, "convolution_kernel on MI250X");
});

Deno.test("an absent point is an instantiation error; restricted mode marks it invalid", async () => {
  const c = await cache("convolution_A100");
  const loose = replaySpace(c);
  const strict = replaySpace(c, { absent: "restricted" });
  // block_size_x 256 * block_size_y 16 > 1024 threads: never measured.
  const p = [15, 4, 0, 0, 0, 0, 0, 0, 0, 0];
  assert.equal(c.cache.has(keyOf(c, p)), false);
  assert.equal(loose.evaluate(p).errorKind, "instantiation_error");
  assert.equal(loose.evaluate(p).seconds, undefined);
  assert.equal(strict.evaluate(p).errorKind, "instantiation_error");
  assert.equal(loose.space.isValid(p), true);
  assert.equal(strict.space.isValid(p), false);
  let valid = 0;
  for (const q of strict.space.enumerate()) if (strict.space.isValid(q)) valid++;
  assert.equal(valid, 4_362);
  assert.equal(strict.allowedCount, 4_362);
  assert.equal(loose.allowedCount, 10_240);
  assert.equal(strict.validCount, 4_201);
  assert.equal(loose.validCount, 4_201);
  assert.equal(strict.optimum, loose.optimum);
  assert.throws(() => loose.evaluate([16, 0, 0, 0, 0, 0, 0, 0, 0, 0]), RangeError);
  assert.throws(() => loose.evaluate([0, 0]), RangeError);
  assert.throws(() => loose.evaluateIndex(10_240), RangeError);
});

Deno.test("space-file restrictions agree with the caches' entries", async () => {
  const spaces = join(KERNELTUNER_DIR, "spaces");
  const pairs: [string, string][] = [
    ["convolution_A100", "convolution_milo"],
    ["convolution_MI250X", "convolution_milo"],
    ["dedispersion_A100", "dedispersion_milo"],
  ];
  for (const [name, spaceName] of pairs) {
    // The restrictions carve out of the Cartesian product exactly the cached configurations.
    const c = await cache(name);
    const s = await readSpaceFile(join(spaces, `${spaceName}.json`));
    const r = replaySpace(c, { restrictions: s.restrictions });
    assert.equal(r.allowedCount, c.cache.size, name);
    for (let i = 0; i < r.space.size; i++) {
      const p = r.space.point(i);
      assert.equal(r.space.isValid(p), c.cache.has(keyOf(c, p)), `${name} ${p}`);
    }
    assert.equal(r.optimum, minTime(c) / 1000);
  }
  // gemm: the cache predates the last restriction of gemm_milo.json. The first seven carve out
  // exactly the cached configurations; the last removes 484 cached ones (MWG = NWG = 128 with
  // MDIMC = NDIMC = 8), which evaluate to instantiation errors once it is applied.
  const c = await cache("gemm_RTX_3090");
  const s = await readSpaceFile(join(spaces, "gemm_milo.json"));
  assert.equal(s.restrictions.length, 8);
  const seven = replaySpace(c, { restrictions: s.restrictions.slice(0, 7) });
  assert.equal(seven.allowedCount, 17_956);
  const all = replaySpace(c, { restrictions: s.restrictions });
  assert.equal(all.allowedCount, 17_956 - 484);
  let cachedAllowed = 0, cachedExcluded = 0;
  for (let i = 0; i < all.space.size; i++) {
    const p = all.space.point(i);
    const cached = c.cache.has(keyOf(c, p));
    assert.equal(seven.space.isValid(p), cached);
    if (all.space.isValid(p)) {
      assert.ok(cached);
      cachedAllowed++;
    } else if (cached) {
      const v = all.space.values(p);
      assert.deepEqual([v.MWG, v.NWG, v.MDIMC, v.NDIMC], [128, 128, 8, 8]);
      assert.deepEqual(all.evaluate(p).errorKind, "instantiation_error");
      cachedExcluded++;
    }
  }
  assert.deepEqual([cachedAllowed, cachedExcluded], [17_472, 484]);
  assert.equal(all.optimum, minTime(c) / 1000);
  assert.equal(all.space.isValid(all.optimumPoint), true);
});

Deno.test("restrictions naming an unknown parameter are rejected", async () => {
  const c = await cache("pnpoly_RTX_3090");
  assert.throws(
    () => replaySpace(c, { restrictions: ["GEMMK == 0"] }),
    /unknown name "GEMMK"/,
  );
  assert.throws(() => replaySpace(c, { absent: "skip" as "invalid" }), RangeError);
});

Deno.test("a small cache: key spellings, measure and random search", () => {
  const c = validateCache({
    device_name: "d",
    kernel_name: "k",
    problem_size: 8,
    tune_params_keys: ["x", "flag", "f"],
    tune_params: { x: [1, 2, 4], flag: [false, true], f: [0.5, 1] },
    objective: "time",
    cache: {
      "1,False,0.5": { time: 4 },
      "2,True,1.0": { time: 2 },
      "4,False,1": { time: "InvalidConfig" },
    },
  }, "tiny.json");
  const r = replaySpace(c, { absent: "restricted" });
  assert.equal(r.optimum, 0.002);
  assert.deepEqual(r.optimumPoint, [1, 1, 1]);
  assert.deepEqual(r.evaluate([2, 0, 1]), { errorKind: "runtime_error", error: "InvalidConfig" });
  assert.equal(r.validCount, 2);
  assert.equal(r.allowedCount, 3);
  assert.deepEqual(r.candidateOf([0, 0, 0]), { knobs: [0, 0, 0] });
  const obs = r.measure([r.candidateOf([0, 0, 0]), r.candidateOf([0, 1, 0])]);
  assert.deepEqual(obs, [
    { candidate: { knobs: [0, 0, 0] }, errorKind: "none", seconds: 0.004 },
    { candidate: { knobs: [0, 1, 0] }, errorKind: "instantiation_error" },
  ]);
  const prng = createPrng(3);
  let hits = 0;
  for (let i = 0; i < 200; i++) {
    const p = r.space.random(prng);
    if (r.space.isValid(p)) {
      hits++;
      assert.notEqual(r.evaluate(p).errorKind, "instantiation_error");
    }
  }
  assert.ok(hits > 0 && hits < 200);
});

Deno.test("a cache key naming an unknown value is a KernelTunerError", () => {
  const c = validateCache({
    device_name: "d",
    kernel_name: "k",
    problem_size: 8,
    tune_params_keys: ["x"],
    tune_params: { x: [1, 2] },
    objective: "time",
    cache: { "3": { time: 1 } },
  }, "odd.json");
  assert.throws(() => replaySpace(c), (e: unknown) => {
    assert.ok(e instanceof KernelTunerError);
    assert.equal(e.file, "odd.json");
    assert.equal(e.field, 'cache["3"]');
    assert.match(e.message, /value "3" of x is not in tune_params\.x/);
    return true;
  });
});

Deno.test("replaySpaceFromFile resolves a bare name to data/kerneltuner", async () => {
  assert.equal(
    resolveCachePath("gemm_RTX_3090"),
    join(KERNELTUNER_DIR, "gemm_RTX_3090.json.gz"),
  );
  assert.equal(resolveCachePath("data/x.json"), "data/x.json");
  assert.equal(resolveCachePath("x.json.gz"), "x.json.gz");
  const r = await replaySpaceFromFile("pnpoly_RTX_3090", { absent: "restricted" });
  assert.equal(r.cache.kernelName, "cn_pnpoly");
  await assert.rejects(replaySpaceFromFile("no_such_cache"), KernelTunerError);
  // Names of the recorded CPU data set resolve to data/conv2d_cpu/.
  const cpu = await replaySpaceFromFile("resnet18_conv2_cpu");
  assert.equal(cpu.cache.kernelName, "conv2d:1,64,56,56,64,3,3,1,1");
});

Deno.test("an entry with time 0 replays as invalid and never becomes the optimum", () => {
  const c = validateCache({
    device_name: "d",
    kernel_name: "k",
    problem_size: 8,
    tune_params_keys: ["x"],
    tune_params: { x: [1, 2, 3] },
    objective: "time",
    cache: { "1": { time: 0 }, "2": { time: 2 }, "3": { time: 5 } },
  }, "zero.json");
  const r = replaySpace(c);
  assert.equal(r.optimum, 0.002);
  assert.deepEqual(r.optimumPoint, [1]);
  assert.equal(r.nonPositiveTimes, 1);
  assert.equal(r.validCount, 2);
  assert.deepEqual(r.evaluate([0]), {
    errorKind: "runtime_error",
    error: "time 0 ms is not positive: treated as an invalid configuration",
  });
  assert.throws(
    () =>
      replaySpace(validateCache({
        device_name: "d",
        kernel_name: "k",
        problem_size: 8,
        tune_params_keys: ["x"],
        tune_params: { x: [1] },
        objective: "time",
        cache: { "1": { time: 0 } },
      }, "zero.json")),
    /no configuration of the cache has a positive time/,
  );
});

Deno.test("a cache whose space passes the replayed points limit is refused before allocating", () => {
  const values = Array.from({ length: 8 }, (_, i) => i);
  const keys = Array.from({ length: 9 }, (_, i) => `p${i}`);
  const c = validateCache({
    device_name: "d",
    kernel_name: "k",
    problem_size: 8,
    tune_params_keys: keys,
    tune_params: Object.fromEntries(keys.map((k) => [k, values])),
    objective: "time",
    cache: { [keys.map(() => "0").join(",")]: { time: 1 } },
  }, "huge.json");
  assert.throws(
    () => replaySpace(c),
    (e) =>
      e instanceof KernelTunerError &&
      /134217728 points .*over the limit "replayed space points" of 67,108,864/.test(e.message),
  );
});
