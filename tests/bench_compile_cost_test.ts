/** bench/compile_cost.ts on a few small kernels, and its bad input. */
import assert from "node:assert/strict";
import { runScript } from "./_cli.ts";

Deno.test("bench/compile_cost.ts times random kernels alone and sets both predictors against gcc's time", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-compile-cost-" });
  try {
    const r = await runScript("bench/compile_cost.ts", [
      "--shape",
      "32,32,32",
      "--rounds",
      "2",
      "--batch",
      "3",
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^matmul 32,32,32, \d+ random kernels \(seed 1\), gcc alone, total [\d.]+ s$/m,
    );
    assert.match(r.stdout, /^correlation with gcc's time: length -?[\d.]+, compileCost -?[\d.]+$/m);
    assert.match(
      r.stdout,
      /sum of walls: by length [\d.]+ s, by compileCost [\d.]+ s, by the true times [\d.]+ s$/m,
    );
    assert.ok(r.stdout.split("\n").filter((l) => /^ {2}\d+ ms: /.test(l)).length >= 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bench/compile_cost.ts: a bad count or shape exits 2 with one line", async () => {
  for (
    const [args, message] of [
      [["--rounds", "0"], /--rounds must be a positive integer/],
      [["--shape", "0,4,4"], /--shape: /],
    ] as const
  ) {
    const r = await runScript("bench/compile_cost.ts", [...args], Deno.cwd());
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
});
