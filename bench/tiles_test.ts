import assert from "node:assert/strict";
import { runScript, SHARED_KERNEL_CACHE } from "../tests/_cli.ts";
import { ROOT } from "../cli/script.ts";
import { UsageError } from "../cli/args.ts";
import { pointOfValues } from "../ir/knobs.ts";
import { createWorkload } from "../ir/workloads.ts";
import { templateSpace } from "../search/templates/registry.ts";
import { parsePoint, tilesTable, tileStats } from "./tiles.ts";

const KNOBS = [
  { name: "fr", options: [16, 32] },
  { name: "xr", options: [1, 7] },
  { name: "parallel", options: ["f", "y"] },
];

Deno.test("parsePoint reads knob values, numbers as numbers, and names a bad one", () => {
  assert.deepEqual(parsePoint("xr=7,parallel=y", KNOBS), { fr: 16, xr: 7, parallel: "y" });
  assert.deepEqual(parsePoint("", KNOBS), { fr: 16, xr: 1, parallel: "f" });
  assert.throws(
    () => parsePoint("yr=2", KNOBS),
    (e) => e instanceof UsageError && /"yr"/.test(e.message),
  );
  assert.throws(
    () => parsePoint("xr=3", KNOBS),
    (e) => e instanceof UsageError && /xr must be one of 1, 7/.test(e.message),
  );
});

Deno.test("tileStats takes ratios round by round, so a slow round slows both kernels alike", () => {
  // Round 2 ran on a machine twice as slow: GFLOP/s spread, the ratio does not.
  const [a, b] = tileStats([[2e-3, 1e-3], [4e-3, 2e-3], [2e-3, 1e-3]], 2e6, ["a", "b"], [
    true,
    true,
  ]);
  assert.equal(a.ratio.median, 1);
  assert.deepEqual([b.ratio.p25, b.ratio.median, b.ratio.p75], [2, 2, 2]);
  assert.equal(b.gflops.median, 2);
  assert.ok(b.gflops.p25 < b.gflops.p75);
  const md = tilesTable(1, [a, { ...b, valid: false }]).split("\n");
  assert.equal(md.length, 4);
  assert.match(md[0], /^\| point, 1 thread \|/);
  assert.equal(md[3], "| b (outside the space) | 2.0 (1.5-2.0) | 2.000 (2.000-2.000) |");
});

Deno.test("bench/tiles.ts times two points interleaved and marks those outside the space", async () => {
  // 16 channels by 4 rows by 2 columns: 16 accumulators, outside the space with AVX2's 16 registers.
  const shape = [1, 8, 10, 10, 16, 3, 3, 1, 1];
  const t = templateSpace("conv2d-nchwc", createWorkload("conv2d", shape));
  const wide = pointOfValues(t.space.knobs, parsePoint("fr=16,yr=4,xr=2", t.space.knobs))!;
  const r = await runScript(
    "bench/tiles.ts",
    [
      "--shape",
      shape.join(),
      "--template",
      "conv2d-nchwc",
      "--point",
      "fr=16,yr=1,xr=4",
      "--point",
      "fr=16,yr=4,xr=2",
      "--threads",
      "1",
      "--rounds",
      "3",
      "--calls",
      "2",
    ],
    ROOT,
    SHARED_KERNEL_CACHE,
  );
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
  assert.equal(summary.report.length, 1);
  const [first, second] = summary.report[0].points;
  assert.equal(first.ratio.median, 1);
  assert.ok(first.gflops.median > 0 && second.gflops.median > 0);
  assert.deepEqual([first.valid, second.valid], [true, t.space.isValid(wide)]);
  assert.equal(r.stdout.includes("fr=16,yr=4,xr=2 (outside the space)"), !second.valid);
});

Deno.test("bench/tiles.ts rejects a bad point with exit 2 and one line", async () => {
  const r = await runScript("bench/tiles.ts", [
    "--shape",
    "1,8,10,10,16,3,3,1,1",
    "--template",
    "conv2d-nchwc",
    "--point",
    "fr=17",
  ], ROOT);
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split("\n").length, 1);
  assert.match(r.stderr, /^tiles: --point "fr=17": fr must be one of/);
});

Deno.test("bench/tiles.ts takes at most 32 points, the harness's kernels, with exit 2 and one line", async () => {
  const points = Array.from({ length: 33 }, () => ["--point", "fr=16"]).flat();
  const r = await runScript("bench/tiles.ts", [
    "--shape",
    "1,8,10,10,16,3,3,1,1",
    "--template",
    "conv2d-nchwc",
    ...points,
  ], ROOT);
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split("\n").length, 1);
  assert.match(r.stderr, /^tiles: at most 32 --point in one run \(the harness's kernels\); got 33/);
});
