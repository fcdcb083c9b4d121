/** End-to-end: `tune-strategy` writes a preset that `compare --strategies NAME@PRESET` runs. */
import { lastJsonLine } from "../cli/output.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";

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
