import assert from "node:assert/strict";
import { bandCurveSVG, bestSoFar, PALETTE, svgToPNG, tuningCurveSVG } from "./tuning_curve.ts";
import { decodePNG, inkFraction } from "./png.ts";

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
  const log = ticks(tuningCurveSVG([{ label: "x", values }], { logY: true }));
  const linear = ticks(tuningCurveSVG([{ label: "x", values }]));
  assert.ok(log.includes("10") && log.includes("100"), log.join());
  assert.ok(!log.includes("0"), log.join());
  assert.ok(linear.includes("0"), linear.join());
});

const ticks = (svg: string) => [...svg.matchAll(/<text[^>]*>([\d,.]+)<\/text>/g)].map((m) => m[1]);

Deno.test("the y axis fits the data, not from 0 (unless zeroY), and a fraction stops at 1", () => {
  const values = [0.8, 0.85, 0.9, 1];
  const fitted = ticks(tuningCurveSVG([{ label: "x", values }], { y: "fraction" }));
  assert.ok(fitted.includes("0.80") && !fitted.includes("0.0"), fitted.join());
  assert.ok(!fitted.includes("1.02") && !fitted.includes("1.05"), fitted.join());
  const zero = ticks(tuningCurveSVG([{ label: "x", values }], { zeroY: true }));
  assert.ok(zero.includes("0.0") || zero.includes("0"), zero.join());
});

function bands(n: number) {
  const x = [1, 2, 3, 4];
  return Array.from({ length: n }, (_, k) => ({
    label: `s${k}`,
    x,
    median: x.map((b) => 0.5 + 0.1 * b - 0.01 * k),
    p25: x.map((b) => 0.45 + 0.1 * b - 0.01 * k),
    p75: x.map((b) => 0.55 + 0.1 * b - 0.01 * k),
  }));
}

Deno.test("bandCurveSVG draws the baseline as a dashed line in every panel, and in the legend", () => {
  const baseline = { label: "random (expected)", x: [1, 2, 3, 4], y: [0.4, 0.5, 0.55, 0.6] };
  const one = bandCurveSVG(bands(2), { baseline });
  assert.equal((one.match(/<g[^>]*stroke-dasharray="6,4"/g) ?? []).length, 1, "one panel");
  assert.match(one, /<line[^>]*stroke-dasharray="6,4"\/><text[^>]*>random \(expected\)/);
  const six = bandCurveSVG(bands(6), { baseline });
  assert.equal((six.match(/<g[^>]*stroke-dasharray="6,4"/g) ?? []).length, 6, "six panels");
  const flat = bandCurveSVG(bands(2), { baseline: { label: "target", value: 0.7 } });
  assert.match(flat, /<g[^>]*stroke-dasharray="6,4"[^>]*><line/);
});

Deno.test("bandCurveSVG gives six strategies one panel each, with the others' medians in grey", async () => {
  const svg = bandCurveSVG(bands(6), { title: "six" });
  // Each panel: its own band in its colour, and the other five medians in grey behind it.
  for (const colour of PALETTE.slice(0, 6)) {
    assert.equal((svg.match(new RegExp(`<path[^>]*fill="${colour}"`, "g")) ?? []).length, 1);
  }
  assert.ok((svg.match(/stroke="#c8c8c8"/g) ?? []).length >= 1, "grey medians of the others");
  for (const k of [0, 5]) assert.match(svg, new RegExp(`>s${k}</text>`), "panel label");
  const height = Number(svg.match(/height="(\d+)"/)![1]);
  assert.ok(height > 6 * 100, `tall enough for six panels: ${height}`);
  const three = bandCurveSVG(bands(3));
  assert.ok(Number(three.match(/height="(\d+)"/)![1]) < 500, "three share one panel");
  const image = decodePNG(await svgToPNG(svg));
  assert.ok(inkFraction(image) > 0.03);
});
