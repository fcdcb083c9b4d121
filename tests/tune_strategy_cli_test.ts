/**
 * End-to-end: `tune-strategy` writes a preset that `compare --strategies NAME@PRESET` runs;
 * `tune` and `tune-network` take the same names.
 */
import { lastJsonLine } from "../cli/output.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";
import { RecordsDB } from "../datasets/db.ts";
import { scriptArgs } from "../cli/script.ts";

Deno.test("tune-strategy writes a preset with its leave-one-space-out score; compare runs it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await runScript(
      "cli/tune_strategy.ts",
      [
        "--strategy",
        "ga",
        "--spaces",
        "convolution_MI250X,pnpoly_RTX_3090",
        "--meta-budget",
        "2",
        "--seeds",
        "2",
        "--out",
        "ga-small.json",
        "--quiet",
      ],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assert.equal(r.code, 0, r.stderr);
    const s = lastJsonLine(r.stdout);
    assert.equal(s.folds.length, 2);
    assert.equal(typeof s.leaveOneOutScore, "number");
    assert.match(r.stderr, /Leave-one-space-out/);
    const preset = JSON.parse(await Deno.readTextFile(join(dir, "ga-small.json")));
    assert.equal(preset.strategy, "ga");
    assert.deepEqual(preset.hyper, s.hyper);
    assert.equal(preset.note.leaveOneOutScore, s.leaveOneOutScore);
    const c = await runScript(
      "cli/compare.ts",
      [
        "--space",
        "pnpoly_RTX_3090",
        "--strategies",
        "ga,ga@ga-small.json",
        "--budget",
        "10",
        "--seeds",
        "2",
        "--quiet",
        "--out",
        "out",
      ],
      dir,
      SHARED_KERNEL_CACHE,
    );
    assert.equal(c.code, 0, c.stderr);
    assert.deepEqual(Object.keys(lastJsonLine(c.stdout).scores), ["ga", "ga@ga-small.json"]);
    const bad = await runScript("cli/tune_strategy.ts", ["--strategy", "grid"], dir);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--strategy grid declares no hyperparameters/);
    const badPreset = await runScript("cli/compare.ts", [
      "--space",
      "pnpoly_RTX_3090",
      "--strategies",
      "sa@nothing-here",
    ], dir);
    assert.equal(badPreset.code, 2);
    assert.match(
      badPreset.stderr,
      /--strategies sa@nothing-here: Preset "nothing-here" of sa@nothing-here: no file/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tune, tune-network and compare take STRATEGY@PRESET; tune records the preset's settings; a bad one exits 2 with one line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "cold.json"),
      JSON.stringify({ name: "cold", strategy: "sa", hyper: { t0: 0.5, init: 5 } }),
    );
    const db = join(dir, "r.db");
    const args = ["--space", "pnpoly_RTX_3090", "--strategy", "sa@cold.json", "--db", db];
    const r = await runScript("cli/tune.ts", [...args, "--trials", "12", "--quiet"], dir);
    assert.equal(r.code, 0, r.stderr);
    const records = RecordsDB.open(db, { mode: "read" });
    const run = records.run(1)!;
    records.close();
    assert.equal(run.strategy, "sa@cold.json");
    assert.equal(run.config.strategy, "sa@cold.json");
    assert.deepEqual(run.config.hyper, { t0: 0.5, init: 5 });
    await Deno.writeTextFile(
      join(dir, "bad.json"),
      JSON.stringify({ strategy: "sa", hyper: { t0: 7 } }),
    );
    for (
      const [script, argv, message] of [
        [
          "cli/tune.ts",
          ["--space", "pnpoly_RTX_3090", "--strategy", "sa@nothing-here"],
          /^tune: Preset "nothing-here" of sa@nothing-here: no file/,
        ],
        [
          "cli/tune.ts",
          ["--workload", "matmul", "--shape", "64,64,64", "--strategy", "random@kt"],
          /random@kt: its settings .* apply to a knob space/,
        ],
        [
          "cli/tune.ts",
          ["--space", "pnpoly_RTX_3090", "--strategy", "magic@kt"],
          /Unknown strategy "magic"/,
        ],
        [
          "cli/tune_network.ts",
          ["--network", "resnet18", "--strategy", "ga@nothing-here"],
          /--strategy ga@nothing-here: Preset "nothing-here" of ga@nothing-here: no file/,
        ],
        [
          "cli/tune_network.ts",
          ["--network", "resnet18", "--strategy", "random@kt"],
          /random@kt: tune-network's random searches the sketches/,
        ],
        [
          "cli/compare.ts",
          ["--space", "pnpoly_RTX_3090", "--strategies", "sa@bad.json"],
          /--strategies sa@bad.json: Hyperparameter sa\.t0 must be one of/,
        ],
      ] as [string, string[], RegExp][]
    ) {
      const bad = await runScript(script, [...argv, "--db", join(dir, "other.db")], dir);
      assert.equal(bad.code, 2, `${script} ${argv.join(" ")}: ${bad.stderr}`);
      assert.match(bad.stderr, message);
      assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tune-strategy killed half-way and rerun with --resume ends with the preset of an uninterrupted run", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const common = [
      "--strategy",
      "pso",
      "--spaces",
      "convolution_MI250X,pnpoly_RTX_3090",
      "--meta",
      "sa",
      "--meta-budget",
      "3",
      "--seeds",
      "2",
    ];
    const whole = await runScript(
      "cli/tune_strategy.ts",
      [...common, "--out", "whole.json", "--quiet"],
      dir,
    );
    assert.equal(whole.code, 0, whole.stderr);
    // Killed (SIGKILL, no clean-up) once 4 (setting, space) pairs are scored.
    const child = new Deno.Command(Deno.execPath(), {
      args: scriptArgs("cli/tune_strategy.ts", [...common, "--db", "t.db", "--out", "cut.json"]),
      cwd: dir,
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let seen = "";
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    while ((seen.match(/^pso .* on \S+: /gm) ?? []).length < 4) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    child.kill("SIGKILL");
    await reader.cancel();
    assert.notEqual((await child.status).code, 0, "it was killed before it finished");
    const resumed = await runScript(
      "cli/tune_strategy.ts",
      [...common, "--db", "t.db", "--resume", "--out", "cut.json"],
      dir,
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /\(2 of 2 runs read back\)/);
    const s = lastJsonLine(resumed.stdout);
    assert.ok(s.resumed >= 8, `${s.resumed} runs read back`);
    const [a, b] = await Promise.all(
      ["whole.json", "cut.json"].map(async (f) =>
        JSON.parse(await Deno.readTextFile(join(dir, f)))
      ),
    );
    assert.deepEqual(b.hyper, a.hyper);
    assert.deepEqual(b.note, a.note);
    assert.deepEqual(a.note.seeds, [0, 1]);
    for (
      const [argv, message] of [
        [["--strategy", "sa", "--resume"], /--resume needs --db/],
        [["--strategy", "sa@kt"], /--strategy sa@kt: tune-strategy searches every setting of sa/],
        [["--strategy", "sa", "--meta", "sa@nothing"], /--meta sa@nothing: Preset "nothing"/],
        [["--strategy", "sa", "--meta", "xgb-transfer"], /--meta xgb-transfer: needs records/],
      ] as [string[], RegExp][]
    ) {
      const bad = await runScript("cli/tune_strategy.ts", argv, dir);
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, message);
      assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
