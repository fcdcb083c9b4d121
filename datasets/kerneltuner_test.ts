import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  cacheStats,
  compileExpression,
  compileRestrictions,
  ExpressionError,
  KERNELTUNER_CACHE_NAMES,
  KERNELTUNER_DIR,
  kernelTunerCaches,
  KernelTunerError,
  readKernelTunerCache,
  readSpaceFile,
} from "./kerneltuner.ts";

const shared = (name: string) => join(KERNELTUNER_DIR, name);

/** The shared folder's README table: parameters, Cartesian size, entries, invalid entries. */
const README_TABLE: Record<string, [number, number, number, number]> = {
  convolution_A100: [10, 10_240, 4_362, 161],
  convolution_A4000: [10, 10_240, 4_362, 161],
  convolution_MI250X: [10, 10_240, 4_362, 0],
  dedispersion_A100: [8, 22_272, 11_130, 0],
  gemm_RTX_3090: [15, 82_944, 17_956, 0],
  pnpoly_RTX_3090: [4, 4_092, 4_092, 330],
};

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tunebook_kt_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function gzip(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const TINY = {
  device_name: "dev",
  kernel_name: "k",
  problem_size: [8, 8],
  tune_params_keys: ["a", "b"],
  tune_params: { a: [1, 2], b: [0, 1, 2] },
  objective: "time",
  cache: {
    "1,0": { a: 1, b: 0, time: 2.5, times: [2.4, 2.6] },
    "2,1": { a: 2, b: 1, time: "RuntimeFailedConfig" },
  },
};

Deno.test("kernelTunerCaches lists the six files of the shared folder", () => {
  const files = kernelTunerCaches();
  assert.equal(files.length, 6);
  assert.deepEqual(files.map((f) => f.replace(/^.*[\\/]/, "")), [
    ...KERNELTUNER_CACHE_NAMES.map((n) => `${n}.json.gz`),
  ]);
  for (const f of files) assert.ok(existsSync(f), `${f} exists`);
});

Deno.test("pnpoly_RTX_3090: fields and sizes match the README table", async () => {
  const c = await readKernelTunerCache(shared("pnpoly_RTX_3090.json.gz"));
  assert.equal(c.deviceName, "NVIDIA GeForce RTX 3090");
  assert.equal(c.kernelName, "cn_pnpoly");
  assert.equal(c.objective, "time");
  assert.equal(c.problemSize, 20_000_000);
  assert.deepEqual(c.tuneParamsKeys, ["between_method", "block_size_x", "tile_size", "use_method"]);
  assert.deepEqual(cacheStats(c), {
    parameters: 4,
    cartesianSize: 4_092,
    entries: 4_092,
    invalid: 330,
  });
  const first = c.cache.get("0,32,1,0")!;
  assert.equal(first.time, 46.268736);
  assert.equal(first.times?.length, 10);
  const markers = new Set(
    [...c.cache.values()].map((e) => e.time).filter((t) => typeof t === "string"),
  );
  assert.deepEqual([...markers], ["RuntimeFailedConfig"]);
});

Deno.test("every shared cache matches its README row", async () => {
  for (const name of KERNELTUNER_CACHE_NAMES) {
    const c = await readKernelTunerCache(shared(`${name}.json.gz`));
    const s = cacheStats(c);
    assert.deepEqual(
      [s.parameters, s.cartesianSize, s.entries, s.invalid],
      README_TABLE[name],
      name,
    );
  }
});

Deno.test("a plain .json cache and a gzipped one read the same", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "tiny.json"), JSON.stringify(TINY));
    await Deno.writeFile(join(dir, "tiny.json.gz"), await gzip(JSON.stringify(TINY)));
    const a = await readKernelTunerCache(join(dir, "tiny.json"));
    const b = await readKernelTunerCache(join(dir, "tiny.json.gz"));
    assert.deepEqual([...a.cache], [...b.cache]);
    assert.deepEqual(a.cache.get("1,0"), { time: 2.5, times: [2.4, 2.6] });
    assert.deepEqual(a.cache.get("2,1"), { time: "RuntimeFailedConfig" });
    assert.deepEqual(cacheStats(a), { parameters: 2, cartesianSize: 6, entries: 2, invalid: 1 });
  });
});

Deno.test("malformed caches give a KernelTunerError naming the file and the field", async () => {
  await withTempDir(async (dir) => {
    const cases: [string, unknown, RegExp, string | undefined][] = [
      ["array", [1, 2], /expected a JSON object/, undefined],
      ["no_device", { ...TINY, device_name: undefined }, /missing/, "device_name"],
      ["keys", { ...TINY, tune_params_keys: "a,b" }, /non-empty list/, "tune_params_keys"],
      ["dupkey", { ...TINY, tune_params_keys: ["a", "a"] }, /twice/, "tune_params_keys[1]"],
      ["values", { ...TINY, tune_params: { a: [], b: [0] } }, /non-empty list/, "tune_params.a"],
      [
        "extra",
        { ...TINY, tune_params: { ...TINY.tune_params, c: [1] } },
        /missing from tune_params_keys/,
        "tune_params.c",
      ],
      ["nocache", { ...TINY, cache: undefined }, /expected an object/, "cache"],
      [
        "time",
        { ...TINY, cache: { "1,0": { time: null } } },
        /milliseconds or an error marker/,
        'cache["1,0"].time',
      ],
      ["keylen", { ...TINY, cache: { "1": { time: 1 } } }, /1 values, expected 2/, 'cache["1"]'],
      [
        "problem",
        { ...TINY, problem_size: { x: 1 } },
        /problem_size|expected a number/,
        "problem_size",
      ],
    ];
    for (const [name, data, re, field] of cases) {
      const path = join(dir, `${name}.json`);
      await Deno.writeTextFile(path, JSON.stringify(data));
      await assert.rejects(readKernelTunerCache(path), (e: unknown) => {
        assert.ok(e instanceof KernelTunerError, `${name}: ${e}`);
        assert.equal(e.file, path);
        assert.equal(e.field, field, name);
        assert.match(e.message, re, name);
        assert.ok(e.message.startsWith(path), e.message);
        return true;
      });
    }
    await Deno.writeTextFile(join(dir, "bad.json"), "{ not json");
    await assert.rejects(readKernelTunerCache(join(dir, "bad.json")), KernelTunerError);
    await assert.rejects(readKernelTunerCache(join(dir, "bad.json")), /not valid JSON/);
    const gz = await gzip(JSON.stringify(TINY));
    await Deno.writeFile(join(dir, "cut.json.gz"), gz.slice(0, gz.length - 12));
    await assert.rejects(readKernelTunerCache(join(dir, "cut.json.gz")), KernelTunerError);
    await Deno.writeTextFile(join(dir, "fake.json.gz"), JSON.stringify(TINY));
    await assert.rejects(readKernelTunerCache(join(dir, "fake.json.gz")), /not gzip/);
    await assert.rejects(readKernelTunerCache(join(dir, "missing.json")), /cannot read/);
  });
});

Deno.test("the expression evaluator follows Python's precedence and arithmetic", () => {
  const ev = (src: string, env: Record<string, unknown> = {}) =>
    compileExpression(src).evaluate(env);
  assert.equal(ev("2 + 3 * 4"), 14);
  assert.equal(ev("(2 + 3) * 4"), 20);
  assert.equal(ev("10 - 2 - 3"), 5);
  assert.equal(ev("16 / 4 / 2"), 2);
  assert.equal(ev("7 / 2"), 3.5);
  assert.equal(ev("2 * 3 % 4"), 2);
  assert.equal(ev("2 ** 3 ** 2"), 512);
  assert.equal(ev("-2 ** 2"), -4);
  assert.equal(ev("2 ** -1"), 0.5);
  assert.equal(ev("7 // 2"), 3);
  assert.equal(ev("-7 // 2"), -4);
  assert.equal(ev("-7 % 3"), 2);
  assert.equal(ev("7 % -3"), -2);
  assert.equal(ev("32 % (64 / 8)"), 0);
  assert.equal(ev("1 + 2 == 3"), true);
  assert.equal(ev("not 1 == 2"), true);
  assert.equal(ev("not 0 or 0"), true); // (not 0) or 0
  assert.equal(ev("1 or 0 and 0"), 1); // 1 or (0 and 0)
  assert.equal(ev("0 and 1 or 5"), 5);
  assert.equal(ev("1 < 2 < 3"), true);
  assert.equal(ev("3 > 2 > 2"), false);
  assert.equal(ev("1 < 3 > 2 != 5"), true);
  assert.equal(ev("True + True"), 2);
  assert.equal(ev("x * y <= 1024", { x: 32, y: 32 }), true);
  assert.equal(ev("x * y <= 1024", { x: 64, y: 32 }), false);
  assert.equal(ev("x in [1, 2, 4]", { x: 2 }), true);
  assert.equal(ev("x not in [1, 2, 4]", { x: 2 }), false);
  assert.equal(ev("'ab' == \"ab\""), true);
  assert.deepEqual(ev("[16, 32]"), [16, 32]);
  assert.deepEqual(ev("[1, 2] + list(range(32, 96+1, 32))"), [1, 2, 32, 64, 96]);
  assert.deepEqual(ev("[2**i for i in range(0, 6)]"), [1, 2, 4, 8, 16, 32]);
  assert.deepEqual(ev("[i for i in range(1, 11) if i % 3 == 0]"), [3, 6, 9]);
  assert.deepEqual(ev("[i * n for i in range(3)]", { n: 10, i: 99 }), [0, 10, 20]);
  assert.equal(ev("max(a, b) + min([3, 1, 2]) + len([1, 2]) + abs(-1)", { a: 1, b: 5 }), 9);
  assert.equal(
    ev("32 <= block_size_x * block_size_y <= 1024", { block_size_x: 1, block_size_y: 32 }),
    true,
  );
  // Every restriction of the four space files, on one configuration.
  assert.equal(
    ev(
      "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*((block_size_y*tile_size_y+(filter_height-1)))) < 12*1024",
      {
        use_shmem: 1,
        block_size_x: 32,
        tile_size_x: 2,
        block_size_y: 4,
        tile_size_y: 2,
        filter_width: 15,
        filter_height: 15,
      },
    ),
    true, // (64 + 14) * (8 + 14) = 1716 < 12288
  );
  assert.equal(
    ev("not (MWG == 128 and NWG == 128 and MDIMC == 8 and NDIMC == 8)", {
      MWG: 128,
      NWG: 128,
      MDIMC: 8,
      NDIMC: 8,
    }),
    false,
  );
  assert.deepEqual(compileExpression("KWG % ((MDIMC * NDIMC)/MDIMA) == 0").names, [
    "KWG",
    "MDIMC",
    "NDIMC",
    "MDIMA",
  ]);
  const ok = compileRestrictions(["a % 2 == 0", "a < 10"], ["a"]);
  assert.deepEqual([2, 3, 12].map((a) => ok({ a })), [true, false, false]);
});

Deno.test("the expression evaluator rejects unknown syntax, names and functions", () => {
  const bad: [string, RegExp][] = [
    ["a & b", /unsupported character "&"/],
    ["a && b", /use and/],
    ["!a", /use not/],
    ["a.b", /unsupported character "\."/],
    ["lambda x: x", /unsupported Python keyword "lambda"/],
    ["1 if a else 2", /conditional expressions are not supported/],
    ["1 if a", /unexpected "if"/],
    ["a is None", /unsupported Python keyword "is"/],
    ["__import__('os')", /unknown function "__import__"/],
    ["eval('1')", /unknown function "eval"/],
    ["a[0]", /unexpected "\["/],
    ["1 +", /unexpected the end/],
    ["(1, 2)", /tuples are not supported/],
    ["(1", /expected "\)"/],
    ["'abc", /unterminated string/],
    ["0x10", /unsupported number literal/],
    ["c == 1", /unknown name "c"/],
  ];
  for (const [src, re] of bad) {
    assert.throws(
      () => compileExpression(src, ["a", "b"]),
      (e: unknown) => {
        assert.ok(e instanceof ExpressionError, `${src}: ${e}`);
        assert.ok(e instanceof KernelTunerError);
        assert.match(e.message, re, src);
        assert.ok(e.message.includes(JSON.stringify(src)), e.message);
        return true;
      },
      src,
    );
  }
  assert.throws(() => compileExpression("1 @ 2"), /unsupported character "@" at column 3/);
  assert.throws(() => compileExpression("a + 1").evaluate({}), /no value for name "a"/);
  assert.throws(() => compileExpression("a // b").evaluate({ a: 1, b: 0 }), /division by zero/);
  assert.throws(() => compileExpression("a < [1]").evaluate({ a: 1 }), /not supported between/);
  assert.throws(() => compileExpression("[1] - [1]").evaluate({}), /unsupported operand type/);
});

Deno.test("readSpaceFile reads the four T1 space files", async () => {
  const conv = await readSpaceFile(shared("spaces/convolution_milo.json"));
  assert.equal(conv.name, "convolution_milo");
  assert.equal(conv.kernelName, "convolution_kernel");
  assert.equal(conv.parameters.length, 10);
  assert.equal(conv.cartesianSize, 10_240);
  assert.equal(conv.restrictions.length, 4);
  assert.equal(conv.restrictions[1], "block_size_x*block_size_y<=1024");
  assert.deepEqual(conv.conditions[1].parameters, ["block_size_x", "block_size_y"]);
  const gemm = await readSpaceFile(shared("spaces/gemm_milo.json"));
  assert.equal(gemm.restrictions[1], "MWG % (MDIMC * VWM) == 0");
  assert.equal(gemm.cartesianSize, 663_552);
  const dedisp = await readSpaceFile(shared("spaces/dedispersion_milo.json"));
  assert.equal(dedisp.cartesianSize, 22_272);
  assert.equal(dedisp.restrictions[0], "32 <= block_size_x * block_size_y <= 1024");
  const hot = await readSpaceFile(shared("spaces/hotspot_milo.json"));
  const values = Object.fromEntries(hot.parameters.map((p) => [p.name, p.values]));
  assert.deepEqual(values.block_size_x.slice(0, 7), [1, 2, 4, 8, 16, 32, 64]);
  assert.equal(values.block_size_x.length, 37);
  assert.deepEqual(values.block_size_y, [1, 2, 4, 8, 16, 32]);
  assert.deepEqual(values.tile_size_x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.equal(hot.cartesianSize, 37 * 6 * 10 * 10 * 10 * 10 * 2);
  const base = Object.fromEntries(hot.parameters.map((p) => [p.name, p.values[0]]));
  assert.equal(hot.isValid({ ...base, block_size_x: 32 }), true);
  assert.equal(hot.isValid({ ...base, block_size_x: 16 }), false); // 16 * 1 < 32
});

Deno.test("malformed space files give a KernelTunerError naming the field", async () => {
  await withTempDir(async (dir) => {
    const space = (conditions: unknown, values: unknown = "[1, 2]") => ({
      ConfigurationSpace: {
        TuningParameters: [{ Name: "a", Type: "int", Values: values }],
        Conditions: conditions,
      },
    });
    const cases: [unknown, string, RegExp][] = [
      [space([{ Expression: "a &&& 1" }]), "ConfigurationSpace.Conditions[0].Expression", /"&"/],
      [
        space([{ Expression: "b > 1" }]),
        "ConfigurationSpace.Conditions[0].Expression",
        /unknown name "b"/,
      ],
      [space([], "[1, 2"), "ConfigurationSpace.TuningParameters[0].Values", /expected "\]"/],
      [space([], "[1.5]"), "ConfigurationSpace.TuningParameters[0].Values", /not an int/],
      [{ General: {} }, "ConfigurationSpace", /expected an object/],
    ];
    for (const [i, [data, field, re]] of cases.entries()) {
      const path = join(dir, `s${i}.json`);
      await Deno.writeTextFile(path, JSON.stringify(data));
      await assert.rejects(readSpaceFile(path), (e: unknown) => {
        assert.ok(e instanceof KernelTunerError, String(e));
        assert.equal(e.field, field);
        assert.match(e.message, re);
        assert.ok(e.message.includes(path));
        return true;
      });
    }
  });
});

Deno.test("kerneltuner.ts re-exports the cache, space-file and restriction modules' values", async () => {
  const facade = await import("./kerneltuner.ts");
  const parts = [
    await import("./kerneltuner_json.ts"),
    await import("./kerneltuner_cache.ts"),
    await import("./kerneltuner_space.ts"),
    await import("./restrictions.ts"),
  ];
  const helpers = ["describe", "isRecord", "isScalar"]; // shared by the readers, not re-exported
  const expected = parts.flatMap((m) => Object.keys(m)).filter((k) => !helpers.includes(k));
  assert.deepEqual(Object.keys(facade).sort(), expected.sort());
  for (const m of parts) {
    for (const [k, v] of Object.entries(m)) {
      if (!helpers.includes(k)) assert.equal((facade as Record<string, unknown>)[k], v, k);
    }
  }
});
