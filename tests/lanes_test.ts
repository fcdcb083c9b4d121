/**
 * `TUNEBOOK_LANES` (issue 41, item 1): kernels generated for 8-float
 * vectors on this machine (as on an AVX2 CPU, and on an AVX-512 CPU when
 * asked) and for the machine's own width are correct, and a bad value
 * exits 2 with one line.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { runScript } from "./_cli.ts";
import { cpuFlags } from "../ir/target_cpu.ts";

Deno.test("a bad TUNEBOOK_LANES exits 2 with one line, before anything runs", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-lanes-" });
  try {
    const cases: [string, string[]][] = [
      ["cli/tune.ts", [
        "--workload",
        "matmul",
        "--shape",
        "8,8,8",
        "--trials",
        "1",
        "--db",
        "r.db",
      ]],
      ["cli/tune_network.ts", ["--network", "squeezenet1_1", "--trials", "1", "--db", "r.db"]],
    ];
    for (const [script, args] of cases) {
      const r = await runScript(script, args, dir, { TUNEBOOK_LANES: "4" });
      assert.equal(r.code, 2, `${script}: exit ${r.code}\n${r.stderr}`);
      const name = script === "cli/tune.ts" ? "tune" : "tune-network";
      assert.equal(
        r.stderr.trim(),
        `${name}: TUNEBOOK_LANES must be 8 or 16 (floats per vector), got "4"`,
      );
    }
    assert.deepEqual([...Deno.readDirSync(dir)], [], "no database written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kernels of 8 lanes (and of the machine's own width) are checked correct on this CPU", async () => {
  const widths = cpuFlags().has("avx512f") ? ["8", "16"] : ["8"];
  for (const lanes of widths) {
    const dir = await Deno.makeTempDir({ prefix: "tb-lanes-" });
    try {
      const args = ["--workload", "matmul", "--shape", "40,56,24", "--template", "matmul-packed"];
      const r = await runScript(
        "cli/tune.ts",
        [...args, "--trials", "6", "--seed", "2", "--db", "r.db", "--quiet"],
        dir,
        { TUNEBOOK_LANES: lanes, TUNEBOOK_CACHE: join(dir, "cache") },
      );
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
      assert.ok(s.valid > 0, `${lanes} lanes: ${r.stdout}`);
      const db = new DatabaseSync(join(dir, "r.db"));
      const kinds = db.prepare("SELECT DISTINCT error_kind AS k FROM results").all()
        .map((row) => String(row.k));
      db.close();
      // Every candidate's output was checked against the reference: none wrong, none crashed.
      for (const bad of ["wrong_answer", "runtime_crash", "compile_host"]) {
        assert.ok(!kinds.includes(bad), `${lanes} lanes: ${kinds}`);
      }
      // The sources built were generated for that width.
      const sources = [...Deno.readDirSync(join(dir, "cache"))].filter((e) =>
        e.name.endsWith(".c")
      );
      assert.ok(sources.length > 0);
      let vector = 0;
      for (const e of sources) {
        const c = await Deno.readTextFile(join(dir, "cache", e.name));
        if (!c.includes("TB_VECTOR_PRELUDE")) continue; // the scalar reference
        assert.match(c, new RegExp(`#define TB_VECTOR_PRELUDE ${lanes}\\n`), e.name);
        vector++;
      }
      assert.ok(vector > 0, `${lanes} lanes: no vector kernel among ${sources.length} sources`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});
