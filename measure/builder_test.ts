import assert from "node:assert/strict";
import { join } from "node:path";
import { balancedGroups, compileCost, createBuilder, truncateMessage } from "./builder.ts";
import { kernelCompiler } from "../ir/target_cpu.ts";
import { VADD_COMPILE_ERROR, VADD_GOOD, VADD_REFERENCE } from "./test_kernels.ts";

/** A source gcc -O3 needs far longer than a second for (4^8 unrolled statements). */
function slowSource(): string {
  const defs = ["#define A0 s = s * 3u + (unsigned)x[s & 7u];"];
  for (let i = 1; i <= 8; i++) defs.push(`#define A${i} A${i - 1} A${i - 1} A${i - 1} A${i - 1}`);
  return `${defs.join("\n")}\nvoid tb_kernel(float **bufs) {\n` +
    "  volatile float *x = bufs[0]; unsigned s = 1; A8 bufs[1][0] = (float)s;\n}\n";
}

async function withCacheDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tb-builder-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("builder compiles, reports in input order, then serves from the cache", async () => {
  await withCacheDir(async (cacheDir) => {
    const builder = createBuilder({ cacheDir, parallel: 2 });
    const done: number[] = [];
    const first = await builder.build(
      [{ source: VADD_GOOD }, { source: VADD_COMPILE_ERROR }, { source: VADD_REFERENCE }],
      (index) => done.push(index),
    );
    assert.deepEqual(done.toSorted(), [0, 1, 2]);
    assert.equal(first[0].errorKind, "none");
    assert.equal(first[0].cached, false);
    assert.ok(first[0].buildSeconds > 0);
    assert.match(first[0].hash, /^[0-9a-f]{64}$/);
    assert.equal(first[0].artifact, join(cacheDir, `${first[0].hash}.so`));
    assert.ok((await Deno.stat(first[0].artifact!)).isFile);
    const cSource = await Deno.readTextFile(join(cacheDir, `${first[0].hash}.c`));
    assert.ok(cSource.includes("int tb_time("));

    assert.equal(first[1].errorKind, "compile_host");
    assert.equal(first[1].artifact, undefined);
    assert.match(first[1].error!, /undeclared_variable_xyz/);
    assert.match(first[1].error!, /error/);

    assert.equal(first[2].errorKind, "none");
    assert.notEqual(first[2].hash, first[0].hash);

    const again = await createBuilder({ cacheDir }).build([{ source: VADD_GOOD }]);
    assert.deepEqual(again[0], { ...first[0], cached: true, buildSeconds: 0 });

    const names = [...Deno.readDirSync(cacheDir)].map((e) => e.name);
    assert.deepEqual(names.filter((n) => n.includes(".tmp-")), []);
  });
});

Deno.test("builder compiles a source repeated in one batch once", async () => {
  await withCacheDir(async (cacheDir) => {
    const results = await createBuilder({ cacheDir }).build([
      { source: VADD_REFERENCE },
      { source: VADD_REFERENCE },
    ]);
    assert.equal(results[0].hash, results[1].hash);
    assert.equal(results[1].errorKind, "none");
    assert.equal(results[1].artifact, results[0].artifact);
  });
});

Deno.test("builder kills a compile that exceeds its timeout", async () => {
  await withCacheDir(async (cacheDir) => {
    const start = performance.now();
    const [result] = await createBuilder({ cacheDir, timeoutSeconds: 0.5 }).build([
      { source: slowSource() },
    ]);
    assert.equal(result.errorKind, "build_timeout");
    assert.equal(result.cached, false);
    assert.ok(performance.now() - start < 10_000);
    const names = [...Deno.readDirSync(cacheDir)].map((e) => e.name);
    assert.deepEqual(names.filter((n) => n.endsWith(".so") || n.includes(".tmp-")), []);
  });
});

Deno.test("a background builder compiles at nice 19, in a session scheduled at nice 19", async () => {
  await withCacheDir(async (cacheDir) => {
    // A stand-in compiler that writes down its nice value and its session's autogroup.
    const cc = join(cacheDir, "fake-cc");
    const seen = join(cacheDir, "seen");
    await Deno.writeTextFile(
      cc,
      `#!/bin/sh\nif [ "$1" = --version ]; then echo "fake-cc 1.0"; exit 0; fi\n` +
        `{ nice; cat /proc/self/autogroup 2>/dev/null || echo "no autogroup"; } > '${seen}'\n` +
        "exit 1\n",
    );
    await Deno.chmod(cc, 0o755);
    const [result] = await createBuilder({ cacheDir, cc, background: true }).build([
      { source: VADD_GOOD },
    ]);
    assert.equal(result.errorKind, "compile_host");
    const [nice, autogroup] = (await Deno.readTextFile(seen)).trim().split("\n");
    assert.equal(nice, "19");
    if (autogroup !== "no autogroup") assert.match(autogroup, /nice 19$/);
    // Without background, the same compiler runs at the builder's own priority.
    const own = new TextDecoder().decode((await new Deno.Command("nice").output()).stdout).trim();
    await createBuilder({ cacheDir: join(cacheDir, "plain"), cc }).build([{ source: VADD_GOOD }]);
    assert.equal((await Deno.readTextFile(seen)).split("\n")[0], own);
    await assert.rejects(
      createBuilder({ cacheDir, cc: "tb-no-such-cc", background: true }).build([
        { source: VADD_GOOD },
      ]),
      /tb-no-such-cc.*scripts\/setup\.sh/,
    );
  });
});

Deno.test("builder names a missing compiler and the setup script", async () => {
  await withCacheDir(async (cacheDir) => {
    const builder = createBuilder({ cacheDir, cc: "tb-no-such-cc" });
    await assert.rejects(
      builder.build([{ source: VADD_GOOD }]),
      /tb-no-such-cc.*scripts\/setup\.sh/,
    );
    await assert.rejects(builder.describe(), /tb-no-such-cc/);
  });
});

Deno.test("builder describes its compiler and flags", async () => {
  const text = await createBuilder({ cacheDir: "unused", cc: "gcc" }).describe();
  assert.match(text, /gcc/);
  assert.match(
    text,
    /-O3 -march=native -fno-tree-loop-if-convert -fopenmp -fPIC -shared -std=gnu11/,
  );
  // Without cc or flags: kernelCompiler's choice (TUNEBOOK_CC, else gcc).
  const chosen = kernelCompiler();
  const machine = await createBuilder({ cacheDir: "unused" }).describe();
  assert.ok(machine.includes(`; ${chosen.cc} ${chosen.flags.join(" ")}`), machine);
});

Deno.test("kernels are built by gcc unless TUNEBOOK_CC names another compiler; clang gets its own flags and runtime", () => {
  assert.equal(kernelCompiler("gcc").cc, "gcc");
  const clang = kernelCompiler("clang-14");
  assert.equal(clang.openmp, "libomp.so.5");
  assert.ok(!clang.flags.includes("-fno-tree-loop-if-convert"), "a gcc-only flag");
  assert.ok(clang.flags.includes("-march=native") && clang.flags.includes("-fopenmp"));
  const before = Deno.env.get("TUNEBOOK_CC");
  try {
    Deno.env.set("TUNEBOOK_CC", "clang-14");
    assert.equal(kernelCompiler().cc, "clang-14");
    Deno.env.delete("TUNEBOOK_CC");
    assert.equal(kernelCompiler().cc, "gcc");
  } finally {
    if (before === undefined) Deno.env.delete("TUNEBOOK_CC");
    else Deno.env.set("TUNEBOOK_CC", before);
  }
});

Deno.test("truncateMessage keeps short text and cuts long text", () => {
  assert.equal(truncateMessage("abc", 10), "abc");
  const cut = truncateMessage("x".repeat(50), 10);
  assert.ok(cut.startsWith("x".repeat(10)));
  assert.match(cut, /40 more characters truncated/);
});

Deno.test("balancedGroups spreads long sources over the groups, at most cap each, every item once in input order", () => {
  const sizes = [50, 10, 40, 10, 30, 10, 20, 10];
  const g = balancedGroups(sizes.map((size, i) => ({ i, size })), 2, 4, (x) => x.size);
  assert.equal(g.length, 2);
  assert.deepEqual(g.flat().map((x) => x.i).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7]);
  for (const group of g) {
    assert.ok(group.length <= 4);
    assert.deepEqual(group.map((x) => x.i), [...group.map((x) => x.i)].sort((a, b) => a - b));
  }
  const totals = g.map((group) => group.reduce((s, x) => s + x.size, 0));
  assert.deepEqual(totals, [90, 90]);
  // Round robin (i % 2) would have given 150 and 30.
  assert.deepEqual(balancedGroups([1, 2, 3], 5, 8, (x) => x).map((x) => x.length), [1, 1, 1]);
  assert.deepEqual(balancedGroups([], 2, 8, (x: number) => x), []);
});

Deno.test("compileCost counts each line as often as the unroll pragmas around it unroll it", () => {
  const body = "    s += x[i * 8 + j];";
  const nest = (outer: string, inner: string) =>
    [
      outer,
      "  for (int i = 0; i < 8; ++i) {",
      inner,
      "  for (int j = 0; j < 8; ++j) {",
      body,
      "  }",
      "  }",
    ].join("\n");
  const plain = compileCost(nest("", ""));
  assert.equal(plain, nest("", "").length - 6); // the seven lines' characters, no newlines
  const inner = compileCost(nest("", '  _Pragma("GCC unroll 8")'));
  // The inner loop's body 8 times; its closing brace counts in the outer block.
  assert.equal(inner - plain, 7 * body.length);
  // Nested pragmas multiply; the #pragma spelling counts the same.
  const both = compileCost(nest("  #pragma GCC unroll 4", '  _Pragma("GCC unroll 8")'));
  const [forI, forJ, close] = [
    "  for (int i = 0; i < 8; ++i) {",
    "  for (int j = 0; j < 8; ++j) {",
    "  }",
  ];
  assert.equal(
    both,
    forI.length + 4 * (forJ.length + close.length) + 32 * body.length + close.length,
  );
  // A pragma unrolls the loop right after it only, and a block's end restores the factor.
  const after = compileCost(
    ['_Pragma("GCC unroll 8")', "for (int i = 0; i < 8; ++i) {", "  a();", "}", "b();"].join("\n"),
  );
  assert.equal(after, "for (int i = 0; i < 8; ++i) {".length + 8 * "  a();".length + 1 + 4);
  assert.equal(compileCost('_Pragma("GCC unroll 8")\nb();\nfor (;;) {\n}'), 4 + 10 + 1);
});

Deno.test("a unity build deals its kernels by compile cost: a short, much unrolled kernel has a compiler to itself", async () => {
  await withCacheDir(async (dir) => {
    const pad = `/* ${"x".repeat(2000)} */`;
    const plain = (k: number) =>
      `${pad}\nvoid tb_kernel(float **bufs) {\n  for (int i = 0; i < 16; ++i) bufs[1][i] = bufs[0][i] + ${k}.0f;\n}\n`;
    const unrolled = [
      "void tb_kernel(float **bufs) {",
      '  _Pragma("GCC unroll 16")',
      "  for (int i = 0; i < 16; ++i) {",
      '    _Pragma("GCC unroll 16")',
      "    for (int j = 0; j < 16; ++j) {",
      "      bufs[1][j] += bufs[0][i * 16 + j] * 2.0f;",
      "    }",
      "  }",
      "}",
    ].join("\n");
    // By length the unrolled kernel is the shortest, and would share a compiler.
    assert.ok(unrolled.length < plain(1).length);
    assert.ok(compileCost(unrolled) > 3 * compileCost(plain(1)));
    const b = createBuilder({ cacheDir: dir, batch: 8, parallel: 2 });
    const r = await b.build([plain(1), unrolled, plain(2), plain(3)].map((source) => ({ source })));
    assert.ok(r.every((x) => x.errorKind === "none"), JSON.stringify(r));
    assert.equal(new Set([r[0], r[2], r[3]].map((x) => x.artifact)).size, 1);
    assert.notEqual(r[1].artifact, r[0].artifact);
  });
});
