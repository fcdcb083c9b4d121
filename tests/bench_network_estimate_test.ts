/** bench/network_estimate.ts on a one-layer network tuned in a records database, and its bad input. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";

Deno.test("bench/network_estimate.ts sets the estimate's parts against the measured pass, round by round", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-network-estimate-" });
  try {
    await Deno.writeTextFile(
      join(dir, "one.json"),
      JSON.stringify({
        name: "one",
        input: { name: "x", shape: [1, 8, 8, 8] },
        layers: [
          { name: "c", op: "conv2d", inputs: ["x"], channels: 8, kernel: 3, pad: 1 },
          { name: "r", op: "relu", inputs: ["c"] },
          { name: "p", op: "max_pool2d", inputs: ["r"], kernel: 2, stride: 2 },
        ],
      }),
    );
    const tuned = await runScript(
      "cli/tune_network.ts",
      ["--network", "one.json", "--trials", "2", "--db", "n.db", "--no-execute"],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assert.equal(tuned.code, 0, tuned.stderr);
    const r = await runScript("bench/network_estimate.ts", [
      "--network",
      "one.json",
      "--db",
      "n.db",
      "--rounds",
      "2",
      "--repeat",
      "2",
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    assert.equal(j.rounds.length, 2);
    for (const x of j.rounds) {
      assert.ok(x.measuredMs > 0 && x.tunerMs > 0, JSON.stringify(x));
      // The pool is a step outside the tuned kernel: it has a time of its own.
      assert.ok(x.otherStepsMs > 0, JSON.stringify(x));
      assert.ok(Math.abs(x.networkMs - (x.tunerMs + x.otherStepsMs + x.coldExtraMs)) < 1e-3);
      // Re-timed: the tuned step timed now in place of the record.
      assert.ok(x.tunedNowMs > 0, JSON.stringify(x));
      assert.ok(Math.abs(x.retimedMs - (x.tunedNowMs + x.otherStepsMs + x.coldExtraMs)) < 1e-3);
      // The flushed variants differ from those by the cache state's part only.
      const d = x.flushedCacheStateMs - x.coldExtraMs;
      assert.ok(Math.abs(x.flushedMs - x.networkMs - d) < 1e-3, JSON.stringify(x));
      assert.ok(Math.abs(x.flushedRetimedMs - x.retimedMs - d) < 1e-3, JSON.stringify(x));
    }
    assert.match(
      r.stdout,
      /\| network \(\+ cache state in a pass\) \| [\d.]+ \| [\d.]+ \([\d.]+-[\d.]+\) \|/,
    );
    assert.match(
      r.stdout,
      /\| network, re-timed and flushed \| [\d.]+ \| [\d.]+ \([\d.]+-[\d.]+\) \|/,
    );
    const none = await runScript("bench/network_estimate.ts", ["--network", "one.json"], dir);
    assert.equal(none.code, 2);
    assert.equal(
      none.stderr.trim(),
      "network_estimate: --db is required: a records database that tune-network wrote",
    );
    const bad = await runScript(
      "bench/network_estimate.ts",
      ["--db", "n.db", "--rounds", "0"],
      dir,
    );
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr.trim(), "network_estimate: --rounds must be a positive integer");
    const net = await runScript(
      "bench/network_estimate.ts",
      ["--network", "nope", "--db", "n.db"],
      dir,
    );
    assert.equal(net.code, 2);
    assert.match(
      net.stderr.trim(),
      /^network_estimate: --network: Unknown network "nope": [^\n]*$/,
    );
    const db = await runScript(
      "bench/network_estimate.ts",
      ["--network", "one.json", "--db", "no.db"],
      dir,
    );
    assert.equal(db.code, 2);
    assert.equal(
      db.stderr.trim(),
      'network_estimate: --db: Cannot open records database "no.db": no such file',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
