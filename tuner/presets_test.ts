import assert from "node:assert/strict";
import { join } from "node:path";
import { resolveStrategy, writePreset } from "./presets.ts";

Deno.test("resolveStrategy: a plain name, a built-in preset, a file by name and by path, recorded settings", async () => {
  assert.deepEqual(resolveStrategy("sa"), { strategy: "sa", hyper: {}, label: "sa" });
  const kt = resolveStrategy("random@kt");
  assert.equal(kt.strategy, "random");
  assert.deepEqual(kt.hyper, { fraction: 0.1 });
  assert.equal(kt.label, "random@kt");
  assert.equal(kt.preset?.name, "kt");
  const dir = await Deno.makeTempDir();
  try {
    const path = await writePreset(
      { name: "cool", strategy: "sa", hyper: { alpha: 0.99, init: 5 } },
      join(dir, "cool.json"),
    );
    assert.deepEqual(resolveStrategy("sa@cool", { dir }).hyper, { alpha: 0.99, init: 5 });
    assert.deepEqual(resolveStrategy(`sa@${path}`).hyper, { alpha: 0.99, init: 5 });
    // A resumed run's recorded settings win: the preset file is not read again.
    await Deno.remove(path);
    const again = resolveStrategy("sa@cool", { dir, hyper: { alpha: 0.99 } });
    assert.deepEqual(again, { strategy: "sa", hyper: { alpha: 0.99 }, label: "sa@cool" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resolveStrategy names an unknown strategy, a missing preset and a bad setting", () => {
  assert.throws(() => resolveStrategy("magic@x"), /Unknown strategy "magic"/);
  assert.throws(() => resolveStrategy("sa@"), /"sa@" names no preset after @/);
  assert.throws(
    () => resolveStrategy("sa@nothing-here"),
    /Preset "nothing-here" of sa@nothing-here: no file/,
  );
  assert.throws(() => resolveStrategy("sa@x", { hyper: { alpha: 2 } }), /sa\.alpha must be one of/);
  assert.throws(
    () => resolveStrategy("grid@x", { hyper: { a: 1 } }),
    /"grid" has no hyperparameter "a"/,
  );
});
