/** End-to-end tests of `deno task compare` on replayed GPU data and on a live CPU workload. */
import assert from "node:assert/strict";
import { lastJsonLine } from "../cli/output.ts";
import { runScript, SHARED_KERNEL_CACHE } from "./_cli.ts";
import { join } from "node:path";

function compare(args: string[], cwd: string) {
  return runScript("cli/compare.ts", args, cwd, SHARED_KERNEL_CACHE);
}

Deno.test("compare on a replayed Kernel Tuner cache prints tables, writes curves and ends with one JSON line", async () => {
  const dir = await Deno.makeTempDir();
  const args = [
    "--space",
    "pnpoly_RTX_3090",
    "--strategies",
    "random,grid,sa,ga,evolutionary",
    "--budget",
    "10,40",
    "--seeds",
    "3",
    "--out",
    "out",
  ];
  const r = await compare(args, dir);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assert.ok(lines.slice(0, -1).every((l) => !l.startsWith("{")), "one JSON line, the last");
  const s = JSON.parse(lines.at(-1)!);
  assert.match(s.space, /pnpoly/);
  assert.ok(s.optimum > 0);
  assert.equal(s.results.length, 10);
  for (const row of s.results) {
    assert.deepEqual(Object.keys(row), [
      "strategy",
      "budget",
      "seeds",
      "mean_fraction",
      "median_fraction",
      "p25",
      "p75",
      "mean_evals",
    ]);
    assert.ok(row.mean_fraction > 0 && row.mean_fraction <= 1);
    assert.ok(row.mean_evals <= row.budget);
    assert.equal(row.seeds, 3);
  }
  assert.match(r.stdout, /\| strategy \| budget \| mean \| median/);
  assert.ok((await Deno.readTextFile(join(dir, "out", "pnpoly_RTX_3090.svg"))).startsWith("<svg"));
  const again = await compare(args, dir);
  assert.deepEqual(lastJsonLine(again.stdout).results, s.results, "reproducible by seed");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("compare measures a live workload through its knob template", async () => {
  const dir = await Deno.makeTempDir();
  const r = await compare([
    "--space",
    "matmul:24,16,8",
    "--strategies",
    "random,grid",
    "--budget",
    "3",
    "--seeds",
    "1",
    "--quiet",
  ], dir);
  assert.equal(r.code, 0, r.stderr);
  const s = lastJsonLine(r.stdout);
  assert.match(s.space, /matmul:24,16,8 \(template matmul\)/);
  assert.ok(
    s.results.every((x: { mean_fraction: number }) => x.mean_fraction > 0 && x.mean_fraction <= 1),
  );
  assert.ok(
    s.results.some((x: { mean_fraction: number }) => x.mean_fraction === 1),
    "the optimum is the best measured",
  );
  // A live space says whether the two strategies' final bests are within their noise.
  assert.deepEqual(s.ranking.strategies.toSorted(), ["grid", "random"]);
  assert.equal(typeof s.ranking.uncertain, "boolean");
  assert.equal(r.stdout.includes("warning: ranking uncertain: "), s.ranking.uncertain);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("compare exits with status 2 and names bad arguments", async () => {
  const dir = await Deno.makeTempDir();
  const cases: [string[], RegExp][] = [
    [[], /Missing --space/],
    [["--space", "nosuch_cache"], /--space nosuch_cache/],
    [["--space", "pnpoly_RTX_3090", "--strategies", "random,magic"], /Unknown strategy "magic"/],
    [["--space", "pnpoly_RTX_3090", "--budget", "10,x"], /not an integer/],
    [["--space", "pnpoly_RTX_3090", "--absent", "maybe"], /--absent must be/],
    [["--space", "matmul:8,0,8"], /Dimension N/],
  ];
  for (const [args, message] of cases) {
    const r = await compare(args, dir);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("compare over several caches prints scores and ranks the strategies across them", async () => {
  const dir = await Deno.makeTempDir();
  const r = await compare([
    "--space",
    "pnpoly_RTX_3090,resnet18_conv1_cpu",
    "--strategies",
    "random,bo,greedy_ils",
    "--budget",
    "10,30",
    "--seeds",
    "2",
    "--quiet",
  ], dir);
  assert.equal(r.code, 0, r.stderr);
  const s = lastJsonLine(r.stdout);
  assert.deepEqual(s.spaces.map((x: { spec: string }) => x.spec), [
    "pnpoly_RTX_3090",
    "resnet18_conv1_cpu",
  ]);
  for (const sp of s.spaces) {
    assert.deepEqual(Object.keys(sp.scores), ["random", "bo", "greedy_ils"]);
    for (const x of Object.values(sp.scores)) assert.ok((x as number) <= 1);
  }
  assert.deepEqual(
    s.ranking.map((x: { strategy: string }) => x.strategy).sort(),
    ["bo", "greedy_ils", "random"],
  );
  assert.match(r.stdout, /Budget-aggregated score/);
  assert.match(r.stdout, /Ranking over 2 spaces/);
  await Deno.remove(dir, { recursive: true });
});
