/**
 * bench/tuning_throughput.ts and bench/replay_throughput.ts run on a tiny
 * size and print their tables.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

async function bench(args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...args],
    cwd: ROOT,
    stdin: "null",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

Deno.test("bench/tuning_throughput.ts reports trials/s and the split of wall time", async () => {
  const out = await bench([
    "bench/tuning_throughput.ts",
    "--shape",
    "16,16,16",
    "--trials",
    "4",
    "--batch",
    "2",
    "--strategies",
    "random,xgb",
    "--min-repeat-ms",
    "0",
    "--modes",
    "serial,overlap,unity,unity+race",
    "--unity",
    "2",
    "--race",
    "1.5",
  ]);
  for (const strategy of ["random", "xgb"]) {
    for (
      const [overlap, unity, race] of [["off", 1, "off"], ["on", 1, "off"], ["off", 2, "off"], [
        "off",
        2,
        "1.5",
      ]]
    ) {
      assert.match(
        out,
        new RegExp(
          `\\| ${strategy} \\| ${overlap} \\| ${unity} \\| ${race} \\| 4 \\| [\\d.]+ \\| [\\d.]+ \\|`,
        ),
      );
    }
  }
  // Kernels measured from a unity build are measured for real (a best figure, not "none").
  for (const strategy of ["random", "xgb"]) {
    assert.match(
      out,
      new RegExp(`\\| ${strategy} \\| off \\| 2 \\| off \\| 4 \\|.*\\| [\\d.]+ \\|$`, "m"),
    );
  }
  assert.match(out, /overhead \(search\+model\)/);
  assert.match(out, /^goal .*: /m);
});

Deno.test("bench/replay_throughput.ts reports proposals/s against its target", async () => {
  const out = await bench(["bench/replay_throughput.ts", "0.02", "pnpoly_RTX_3090"]);
  assert.match(out, /pnpoly_RTX_3090\s+invalid\s+[\d,]+/);
  assert.match(out, /slowest: [\d,]+ proposals\/s \(target 100,000\): (ok|TOO SLOW)/);
});
