/** bench/cli_throughput.ts on two checkouts (here the same one twice), and its bad input. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT, runScript, writeTwoConvs } from "./_cli.ts";

Deno.test("bench/cli_throughput.ts times tune in both checkouts and re-times what each reported", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-cli-throughput-" });
  try {
    const r = await runScript("bench/cli_throughput.ts", [
      "--before",
      ROOT,
      "--after",
      ROOT,
      "--shape",
      "16,16,16",
      "--trials",
      "3",
      "--rounds",
      "2",
      "--strategies",
      "random",
      "--retime-rounds",
      "1",
      "--out",
      join(dir, "work"),
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    // Two rounds, each side once a round, the order swapped in the second.
    const lines = r.stdout.split("\n").filter((l) => /^(before|after) random round/.test(l));
    assert.deepEqual(lines.map((l) => l.split(" ")[0]), ["before", "after", "after", "before"]);
    for (const l of lines) assert.match(l, /: [\d.]+ trials\/s \(3 in [\d.]+ s, load [\d.]+\)/);
    const rows = r.stdout.split("\n").filter((l) =>
      /^\| random \| \d \| (before|after) \|/.test(l)
    );
    assert.equal(rows.length, 4);
    // Every reported kernel has its re-timed figure, and each round its two ratios.
    for (const row of rows) assert.match(row, /\| [\d.]+ \| [\d.]+ \|$/);
    const summary = r.stdout.split("\n").find((l) => l.startsWith("| random | x"));
    assert.match(
      summary ?? "",
      /^\| random \| x[\d.]+ \([\d.]+, [\d.]+\) \| [\d.]+ \([\d.]+, [\d.]+\) \|$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bench/cli_throughput.ts tunes a network in both checkouts and times both, in turn", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-cli-throughput-net-" });
  try {
    await writeTwoConvs(dir);
    const r = await runScript("bench/cli_throughput.ts", [
      "--before",
      ROOT,
      "--after",
      ROOT,
      "--strategies",
      "none",
      "--network",
      "two.json",
      "--network-trials",
      "4",
      "--network-rounds",
      "2",
      "--out",
      join(dir, "work"),
    ], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^before tune-network .*two\.json: [\d.]+ trials\/s \(\d+ in/m);
    assert.match(r.stdout, /^after tune-network /m);
    assert.match(
      r.stdout,
      /trials\/s after \/ before x[\d.]+; network pass before \/ after [\d.]+ \([\d.]+, [\d.]+; ms before [\d.]+, after [\d.]+\)/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bench/cli_throughput.ts: missing or wrong checkouts and bad counts exit 2 with one line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-cli-throughput-bad-" });
  try {
    const cases: [string[], RegExp][] = [
      [["--after", ROOT], /--before DIR and --after DIR are required/],
      [["--before", dir, "--after", ROOT], /is not a tunebook checkout \(no cli\/tune\.ts\)/],
      [["--before", ROOT, "--after", ROOT, "--trials", "0"], /--trials must be a positive integer/],
    ];
    for (const [args, message] of cases) {
      const r = await runScript("bench/cli_throughput.ts", args, dir);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
