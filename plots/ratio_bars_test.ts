import assert from "node:assert/strict";
import { ratioBarsSVG } from "./ratio_bars.ts";
import { svgSize, svgToPNG } from "./figure.ts";
import { decodePNG, distinctColours } from "./png.ts";

Deno.test("ratioBarsSVG() draws a labelled bar per row, the target line, and colours bars below it", async () => {
  const bars = [
    { label: "conv2d(1,64,56,56,64,3,3,1,1)", ratio: 0.98 },
    { label: "conv2d(1,512,7,7,512,3,3,1,1)", ratio: 0.85 },
    { label: "conv2d(1,128,28,28,256,1,1,2,0)", ratio: 1.12 },
  ];
  const svg = ratioBarsSVG(bars, { title: "tunebook / oneDNN", target: 0.9 });
  for (const b of bars) {
    assert.ok(svg.includes(b.label), b.label);
    assert.ok(svg.includes(b.ratio.toFixed(2)), String(b.ratio));
  }
  assert.ok(svg.includes("tunebook / oneDNN"));
  // One bar below the target (red), two at or above it (blue), the dashed target line.
  assert.equal(svg.match(/fill="#e45756"/g)?.length, 1);
  assert.equal(svg.match(/fill="#4269d0"/g)?.length, 2);
  assert.match(svg, /stroke-dasharray="4 3"/);
  // The height grows with the rows; the PNG has the two bar colours.
  assert.ok(svgSize(ratioBarsSVG([...bars, ...bars], { title: "t" })).height > svgSize(svg).height);
  assert.ok(distinctColours(decodePNG(await svgToPNG(svg))) >= 3);
});
