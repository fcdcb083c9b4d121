/**
 * bench/tuning_throughput.ts and bench/replay_throughput.ts run on a tiny
 * size and print their tables; the replay bench's verdict is its slowest
 * figure against its target (either way, since it depends on the machine).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { randomThroughput } from "../bench/replay_throughput.ts";
import { replaySpaceFromFile } from "../search/replay.ts";

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
    "serial,overlap,unity,unity+race,unity+screen",
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
  // Kernels measured from a unity build are measured for real (a best figure, not "none"),
  // and every mode's finalists are built again at the full level (-O3) and timed again.
  for (const strategy of ["random", "xgb"]) {
    assert.match(
      out,
      new RegExp(
        `\\| ${strategy} \\| off \\| 2 \\| off \\| 4 \\|.*\\| [\\d.]+ \\| -O3 \\| [\\d.]+ \\| [\\d.]+ \\|$`,
        "m",
      ),
    );
    // A screening mode tunes at --screen-opt (default -O2); its final figure is still at -O3.
    assert.match(
      out,
      new RegExp(
        `\\| ${strategy} \\| off \\| 2 \\| off \\| 4 \\|.*\\| [\\d.]+ \\| -O2 \\| [\\d.]+ \\| [\\d.]+ \\|$`,
        "m",
      ),
    );
  }
  assert.match(out, /overhead \(search\+model\)/);
  assert.match(out, /^goal .*: /m);
});

Deno.test("bench/replay_throughput.ts reports proposals/s against its target", async () => {
  const out = await bench(["bench/replay_throughput.ts", "0.02", "pnpoly_RTX_3090"]);
  const count = (text: string) => Number(text.replaceAll(",", ""));
  const rows = [
    ...out.matchAll(/^pnpoly_RTX_3090\s+(invalid|restricted)\s+([\d,]+)\s+([\d.]+)$/gm),
  ];
  assert.deepEqual(rows.map((m) => m[1]), ["invalid", "restricted"], out);
  for (const m of rows) {
    assert.ok(count(m[2]) > 0, m[0]);
    // best/optimum: the optimum is the cache's best, so no sample beats it.
    assert.ok(Number(m[3]) > 0 && Number(m[3]) <= 1, m[0]);
  }
  const slowest = out.match(/slowest: ([\d,]+) proposals\/s \(target ([\d,]+)\): (ok|TOO SLOW)$/m);
  assert.ok(slowest, out);
  // The verdict is the slowest row's figure against the target, whatever this machine's speed.
  assert.equal(count(slowest[1]), Math.min(...rows.map((m) => count(m[2]))));
  assert.equal(count(slowest[2]), 100_000);
  assert.equal(slowest[3], count(slowest[1]) >= 100_000 ? "ok" : "TOO SLOW", slowest[0]);
});

Deno.test("randomThroughput's rate is its proposals over its time, and its best a cache time", async () => {
  const r = await replaySpaceFromFile("pnpoly_RTX_3090", { absent: "restricted" });
  const start = performance.now();
  const t = randomThroughput(r, 0.05, true);
  const elapsed = (performance.now() - start) / 1000;
  assert.ok(t.proposals >= 1000 && t.proposals % 1000 === 0, `${t.proposals}`); // whole batches
  // It ran at least its 0.05 s and at most the time this call took.
  assert.ok(t.perSecond <= t.proposals / 0.05 + 1e-6, `${t.perSecond} of ${t.proposals}`);
  assert.ok(t.perSecond >= t.proposals / elapsed - 1e-6, `${t.perSecond} in ${elapsed} s`);
  assert.ok(Number.isFinite(t.best) && t.best >= r.optimum, `${t.best} against ${r.optimum}`);
});
