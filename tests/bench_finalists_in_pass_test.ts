/** bench/finalists_in_pass.ts on a small network tuned in a records database, and its bad input. */
import assert from "node:assert/strict";
import { runScript, SHARED_KERNEL_CACHE, writeTwoConvs } from "./_cli.ts";

Deno.test("bench/finalists_in_pass.ts times every task's candidates inside passes and by itself, and the network with the choice", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-finalists-in-pass-" });
  try {
    await writeTwoConvs(dir);
    const tuned = await runScript(
      "cli/tune_network.ts",
      ["--network", "two.json", "--trials", "6", "--db", "n.db", "--no-execute"],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assert.equal(tuned.code, 0, tuned.stderr);
    const r = await runScript("bench/finalists_in_pass.ts", [
      "--network",
      "two.json",
      "--db",
      "n.db",
      "--finalists",
      "3",
      "--rounds",
      "2",
      "--repeat",
      "2",
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    // Both convolutions are one task (same shape), run by two layers.
    assert.equal(j.tasks.length, 1);
    const [t] = j.tasks;
    assert.equal(t.weight, 2);
    assert.ok(t.candidates.length >= 2 && t.candidates.length <= 3, JSON.stringify(t));
    for (const c of t.candidates) assert.ok(c.inPassMs > 0 && c.isolatedMs > 0, JSON.stringify(c));
    // The choices are the fastest candidates by each timing.
    const by = (k: "inPassMs" | "isolatedMs") =>
      t.candidates.reduce(
        (b: number, c: Record<string, number>, i: number) => c[k] < t.candidates[b][k] ? i : b,
        0,
      );
    assert.equal(t.chosen, by("inPassMs"));
    assert.equal(t.fastestIsolated, by("isolatedMs"));
    assert.equal(j.passes.length, 2);
    for (const p of j.passes) assert.ok(p.recordedMs > 0 && p.chosenMs > 0, JSON.stringify(p));
    // Every candidate computes the same convolution.
    assert.ok(j.maxRelativeError < 1e-4, String(j.maxRelativeError));
    assert.match(r.stdout, /\| conv2d\(1,8,8,8,8,3,3,1,1\) \| 2 \| 1 \(recorded/);
    assert.match(r.stdout, /chosen in a pass: [01] of 1 tasks changed; .* recorded \/ chosen/);
    const none = await runScript("bench/finalists_in_pass.ts", ["--network", "two.json"], dir);
    assert.equal(none.code, 2);
    assert.equal(
      none.stderr.trim(),
      "finalists_in_pass: --db is required: a records database that tune-network wrote",
    );
    const bad = await runScript(
      "bench/finalists_in_pass.ts",
      ["--db", "n.db", "--finalists", "0"],
      dir,
    );
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr.trim(), "finalists_in_pass: --finalists must be a positive integer");
    const net = await runScript(
      "bench/finalists_in_pass.ts",
      ["--network", "nope", "--db", "n.db"],
      dir,
    );
    assert.equal(net.code, 2);
    assert.match(
      net.stderr.trim(),
      /^finalists_in_pass: --network: Unknown network "nope": [^\n]*$/,
    );
    const missing = await runScript("bench/finalists_in_pass.ts", ["--db", "nope.db"], dir);
    assert.equal(missing.code, 2);
    assert.equal(
      missing.stderr.trim(),
      'finalists_in_pass: --db: Cannot open records database "nope.db": no such file',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
