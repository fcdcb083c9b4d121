import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { svgSize } from "./figure.ts";
import { decodePNG, inkFraction } from "./png.ts";
import { bandCurveSpec, vegaLiteBundle, vegaLiteSVG } from "./vegalite.ts";

const SERIES = [
  {
    label: "random",
    x: [1, 2, 3],
    median: [0.2, 0.5, 0.7],
    p25: [0.1, 0.4, 0.6],
    p75: [0.3, 0.6, 0.8],
  },
  {
    label: "xgb",
    x: [1, 2, 3],
    median: [0.2, 0.6, Infinity],
    p25: [0.1, 0.5, 0.9],
    p75: [0.3, 0.7, 1],
  },
];

Deno.test("a Vega-Lite band-curve spec holds every point and renders to SVG with both series", async () => {
  const spec = bandCurveSpec(SERIES, { title: "t", x: "wall seconds" });
  const values = (spec.data as { values: { series: string; median: number | null }[] }).values;
  assert.equal(values.length, 6);
  assert.equal(values[5].median, null); // not finite: a gap, not an invalid JSON number
  JSON.parse(JSON.stringify(spec));
  const svg = await vegaLiteSVG(spec);
  assert.match(svg, /^<svg/);
  assert.ok(svg.includes("random") && svg.includes("xgb"), "legend labels");
  assert.ok(svg.includes("wall seconds"), "axis title");
  assert.ok((svg.match(/<path/g) ?? []).length >= 4, "areas and lines drawn");
});

Deno.test("vegaLiteBundle() carries the spec and its PNG, and no SVG for exports to strip", async () => {
  const spec = bandCurveSpec(SERIES, { title: "t" });
  const bundle = await vegaLiteBundle(spec);
  assert.deepEqual(Object.keys(bundle).sort(), [
    "application/vnd.vegalite.v5+json",
    "image/png",
    "text/plain",
  ]);
  assert.equal(bundle["application/vnd.vegalite.v5+json"], spec);
  assert.equal(bundle["text/plain"], "t");
  const image = decodePNG(Buffer.from(bundle["image/png"] as string, "base64"));
  const { width, height } = svgSize(await vegaLiteSVG(spec));
  assert.deepEqual([image.width, image.height], [Math.ceil(2 * width), Math.ceil(2 * height)]);
  assert.ok(inkFraction(image) > 0.01, "the areas, lines and axes are drawn");
});
