/**
 * bench/if_conversion.ts runs on a tiny records database: it counts the
 * kernels the flag changes and measures the fastest both ways.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runSession } from "../tuner/session.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

Deno.test("bench/if_conversion.ts counts changed kernels and measures the fastest with and without the flag", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const db = join(dir, "r.db");
    const cache = join(dir, "cache");
    // A conv2d with padding: its zero-padded copy is what if-conversion vectorizes.
    await runSession({
      db,
      workload: { name: "conv2d", shape: [1, 4, 9, 9, 4, 3, 3, 1, 1] },
      strategy: "random",
      template: "conv2d-packed",
      trials: 3,
      timing: { number: 1, repeat: 1, minRepeatMs: 0 },
      cacheDir: cache,
    });
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "bench/if_conversion.ts", "--db", db, "--best", "1", "--rounds", "1"],
      cwd: ROOT,
      env: { TUNEBOOK_CACHE: cache },
      stdin: "null",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
    assert.match(
      lines[0],
      /: \d of 3 kernels compile to different code with -fno-tree-loop-if-convert/,
    );
    const json = JSON.parse(lines.at(-1)!);
    assert.equal(json.changed[db].kernels, 3);
    assert.equal(json.figures.length, 1);
    const f = json.figures[0];
    assert.ok(f.default_gflops > 0 && f.flag_gflops > 0, JSON.stringify(f));
    assert.equal(typeof f.code_changed, "boolean");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
