import assert from "node:assert/strict";
import { bestSoFar, PALETTE, svgToPNG, tuningCurveSVG } from "./tuning_curve.ts";

Deno.test("bestSoFar keeps the running maximum and skips failed trials", () => {
  assert.deepEqual(bestSoFar([NaN, 2, 1, NaN, 5, 3]), [NaN, 2, 2, 2, 5, 5]);
});

Deno.test("tuningCurveSVG draws one coloured line per series with its legend", async () => {
  const svg = tuningCurveSVG([
    { label: "a <1>", values: bestSoFar([1, 2, 3]) },
    { label: "b", values: bestSoFar([NaN, 4, 4]) },
  ], { title: "T" });
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(svg, /a &lt;1&gt;/);
  assert.equal((svg.match(/<path[^>]*stroke="#4269d0"/g) ?? []).length, 1);
  assert.ok(svg.includes(`fill="${PALETTE[1]}"`));
  const png = await svgToPNG(svg);
  assert.deepEqual([...png.slice(1, 4)], [80, 78, 71]); // "PNG"
});

Deno.test("tuningCurveSVG with logY puts the y ticks on a log scale, without zero", () => {
  const values = [500, 200, 50, 20, 8];
  const ticks = (svg: string) =>
    [...svg.matchAll(/<text[^>]*>([\d,.]+)<\/text>/g)].map((m) => m[1]);
  const log = ticks(tuningCurveSVG([{ label: "x", values }], { logY: true }));
  const linear = ticks(tuningCurveSVG([{ label: "x", values }]));
  assert.ok(log.includes("10") && log.includes("100"), log.join());
  assert.ok(!log.includes("0"), log.join());
  assert.ok(linear.includes("0"), linear.join());
});
