import assert from "node:assert/strict";
import { join } from "node:path";
import { runScript, SHARED_KERNEL_CACHE } from "../tests/_cli.ts";
import { UsageError } from "../cli/args.ts";
import { trialsToReach } from "../tuner/trials_used.ts";
import { parseNetworkStudyArgs, studyTable } from "./network_study.ts";

Deno.test("studyTable prints one markdown row per network and strategy, '-' for never", () => {
  const md = studyTable([
    {
      network: "n",
      strategy: "xgb",
      trials: 40,
      trialsUsed: 12,
      estimateMs: 2.345,
      measuredMs: 3,
      matchesReference: true,
      seconds: 61.4,
    },
    {
      network: "n",
      strategy: "ga",
      trials: 40,
      trialsUsed: null,
      estimateMs: 4,
      measuredMs: 5,
      matchesReference: false,
      seconds: 1,
    },
  ], { n: 30 });
  const lines = md.split("\n");
  assert.equal(lines.length, 4);
  assert.equal(lines[2], "| n | xgb | 40 | 12 | 2.345 | 3.000 | 30.00 | yes | 61 |");
  assert.equal(lines[3], "| n | ga | 40 | - | 4.000 | 5.000 | 30.00 | NO | 1 |");
});

Deno.test("parseNetworkStudyArgs rejects a bad flag with a UsageError naming it", () => {
  const bad = (args: string[], flag: RegExp) =>
    assert.throws(
      () => parseNetworkStudyArgs(args),
      (e) => e instanceof UsageError && flag.test(e.message),
    );
  bad(["--trials", "0"], /--trials/);
  bad(["--strategies", "random,nope"], /--strategies "nope"/);
  bad(["--strategies", "xgb-transfer"], /--strategies "xgb-transfer"/);
  bad(["--template", "conv9"], /--template "conv9"/);
  bad(["--within", "1.5"], /--within/);
  bad(["--out", " "], /--out/);
  bad(["--bogus"], /bogus/);
  const a = parseNetworkStudyArgs(["--no-seed-default", "--template", "conv2d-packed"]);
  assert.equal(a.seedDefault, false);
  assert.equal(a.transfer, true);
  assert.equal(parseNetworkStudyArgs(["--no-transfer"]).transfer, false);
  assert.deepEqual(a.templates, ["conv2d-packed"]);
  assert.deepEqual(a.strategies, [
    "random",
    "xgb",
    "xgb-rank",
    "ga",
    "ppo",
    "dqn",
    "bandit",
    "ansor",
  ]);
});

const TINY = {
  name: "tiny",
  input: { name: "x", shape: [1, 3, 10, 10] },
  layers: [
    { name: "c", op: "conv2d", inputs: ["x"], channels: 8, kernel: 3, pad: 1 },
    { name: "r", op: "relu", inputs: ["c"] },
    { name: "c2", op: "conv2d", inputs: ["r"], channels: 8, kernel: 3, pad: 1 },
    { name: "g", op: "global_avg_pool2d", inputs: ["c2"] },
  ],
};

Deno.test("bench/network_study.ts: bad input exits 2 with one line naming the flag or file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-network-study-" });
  try {
    const run = (args: string[]) => runScript("bench/network_study.ts", args, dir);
    for (
      const [args, said] of [
        [["--trials", "-3"], /--trials/],
        [["--networks", "resnet99"], /--networks: Unknown network "resnet99"/],
        [["--strategies", "sa,nope"], /--strategies "nope"/],
      ] as const
    ) {
      const r = await run([...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.match(r.stderr, said);
    }
    await Deno.writeTextFile(join(dir, "tiny.json"), JSON.stringify(TINY));
    await Deno.writeTextFile(join(dir, "file"), "");
    const onFile = await run(["--networks", "tiny.json", "--out", "file"]);
    assert.equal(onFile.code, 2);
    assert.match(onFile.stderr, /--out "file" is a file/);
    await Deno.mkdir(join(dir, "old"));
    await Deno.writeTextFile(join(dir, "old", "tiny-random.db"), "");
    const old = await run(["--networks", "tiny.json", "--strategies", "random", "--out", "old"]);
    assert.equal(old.code, 2);
    assert.match(old.stderr, /already holds .*tiny-random\.db/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bench/network_study.ts tunes a network per strategy and writes the table, JSON and plots", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-network-study-" });
  try {
    await Deno.writeTextFile(join(dir, "tiny.json"), JSON.stringify(TINY));
    const r = await runScript(
      "bench/network_study.ts",
      [
        "--networks",
        "tiny.json",
        "--strategies",
        "random,xgb",
        "--trials",
        "4",
        "--out",
        "s",
        "--repeat",
        "1",
      ],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(await Deno.readTextFile(join(dir, "s", "network_study.json")));
    assert.deepEqual(out.rows.map((x: { strategy: string }) => x.strategy), ["random", "xgb"]);
    const best = Math.min(...out.rows.map((x: { estimateMs: number }) => x.estimateMs));
    assert.ok(Math.abs(out.targetMs.tiny - 1.05 * best) < 1e-9 * best);
    for (const row of out.rows) {
      assert.equal(row.trials, 4);
      assert.equal(row.matchesReference, true);
      // JSON writes NaN (no estimate yet) as null.
      const curve: number[] = out.curves.tiny[row.strategy].map((v: number | null) => v ?? NaN);
      assert.equal(curve.length, 4);
      assert.equal(
        row.trialsUsed,
        trialsToReach(curve, out.targetMs.tiny) ?? null,
      );
    }
    assert.ok(out.rows.some((x: { trialsUsed: number | null }) => x.trialsUsed !== null));
    // The default schedule of each task is its first trial, in each session's database.
    assert.match(r.stdout, /^\| network \| strategy \|/);
    assert.equal(r.stdout.trim().split("\n").length, 4);
    assert.match(await Deno.readTextFile(join(dir, "s", "network_study_tiny.svg")), /^<svg/);
    assert.equal((await Deno.readFile(join(dir, "s", "network_study_tiny.png")))[1], 80);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bench/network_study.ts --layout NCHW16c tunes the blocked tasks and runs them blocked", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-network-study-" });
  try {
    await Deno.writeTextFile(
      join(dir, "blocked.json"),
      JSON.stringify({
        name: "blocked",
        input: { name: "x", shape: [1, 3, 10, 10] },
        layers: [
          { name: "c", op: "conv2d", inputs: ["x"], channels: 16, kernel: 3, pad: 1 },
          { name: "r", op: "relu", inputs: ["c"] },
          { name: "d", op: "conv2d", inputs: ["r"], channels: 16, kernel: 3, pad: 1, groups: 16 },
          { name: "g", op: "global_avg_pool2d", inputs: ["d"] },
        ],
      }),
    );
    const args = ["--networks", "blocked.json", "--strategies", "random", "--trials", "4"];
    const r = await runScript(
      "bench/network_study.ts",
      [...args, "--out", "s", "--repeat", "1", "--layout", "NCHW16c"],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(await Deno.readTextFile(join(dir, "s", "network_study.json")));
    assert.equal(out.layout, "NCHW16c");
    assert.equal(out.rows[0].matchesReference, true);
    // The tasks are the blocked workloads (the image read in NCHW, a block of 1).
    assert.match(r.stderr, /conv2d_nchwc\(1,3,10,10,16,3,3,1,1,1,16\)/);
    assert.match(r.stderr, /depthwise_conv2d_nchwc\(1,16,10,10,3,3,1,1,16\)/);
    const bad = await runScript("bench/network_study.ts", [...args, "--layout", "NHWC"], dir);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^network_study: --layout: Unknown layout "NHWC"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
