import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { figureBundle, svgSize, svgToPNG } from "./figure.ts";
import { decodePNG, inkFraction } from "./png.ts";
import { tuningCurveSVG } from "./tuning_curve.ts";

const LABEL = '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40">' +
  '<rect width="100%" height="100%" fill="white"/>' +
  '<text x="4" y="28" font-size="24" font-family="sans-serif">Ag</text></svg>';

Deno.test("svgToPNG() draws text with a system font (not an empty frame)", async () => {
  const image = decodePNG(await svgToPNG(LABEL));
  assert.deepEqual([image.width, image.height], [120, 40]);
  assert.ok(inkFraction(image) > 0.02, `ink ${inkFraction(image)}`);
  const blank = decodePNG(await svgToPNG(LABEL.replace(/<text.*<\/text>/, "")));
  assert.equal(inkFraction(blank), 0);
});

Deno.test("svgToPNG() renders at `scale` pixels per SVG unit", async () => {
  const image = decodePNG(await svgToPNG(LABEL, { scale: 2 }));
  assert.deepEqual([image.width, image.height], [240, 80]);
});

Deno.test("svgSize() reads the root element's width and height", () => {
  assert.deepEqual(svgSize(LABEL), { width: 120, height: 40 });
  assert.deepEqual(svgSize('<svg class="marks" width="648.5" height="3"><svg width="9"/></svg>'), {
    width: 648.5,
    height: 3,
  });
  assert.deepEqual(svgSize("<svg/>"), { width: 0, height: 0 });
});

Deno.test("figureBundle() carries the SVG, its PNG at twice the size and an <img> of that PNG", async () => {
  const svg = tuningCurveSVG([{ label: "random", values: [1, 2, 4] }], { title: "T" });
  const bundle = await figureBundle(svg, { alt: 'curve "a" <b>' });
  assert.deepEqual(Object.keys(bundle).sort(), [
    "image/png",
    "image/svg+xml",
    "text/html",
    "text/plain",
  ]);
  assert.equal(bundle["image/svg+xml"], svg);
  assert.equal(bundle["text/plain"], 'curve "a" <b>');
  const image = decodePNG(Buffer.from(bundle["image/png"], "base64"));
  const size = svgSize(svg);
  assert.deepEqual([image.width, image.height], [2 * size.width, 2 * size.height]);
  assert.ok(inkFraction(image) > 0.01, "axes, labels and the line are drawn");
  assert.equal(
    bundle["text/html"],
    `<img src="data:image/png;base64,${
      bundle["image/png"]
    }" width="${size.width}" height="${size.height}" alt="curve &quot;a&quot; &lt;b>">`,
  );
});
