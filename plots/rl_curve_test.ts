import assert from "node:assert/strict";
import { learningCurveSVG, svgToPNG } from "./rl_curve.ts";
import { PALETTE } from "./tuning_curve.ts";

const episodes = (k: number) =>
  [0, 1, 2].map((e) => ({ episode: e, meanReward: k * e - 1, maxReward: k * e }));

Deno.test("learningCurveSVG draws a solid mean and a dashed max line per series", async () => {
  const svg = learningCurveSVG([{ label: "layer <1>", episodes: episodes(1) }, {
    label: "layer 2",
    episodes: episodes(2),
  }], { title: "T" });
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(svg, /layer &lt;1&gt;/);
  assert.equal((svg.match(/stroke-dasharray="4,3"/g) ?? []).length, 1); // one mark, all series
  for (const colour of PALETTE.slice(0, 2)) {
    assert.equal((svg.match(new RegExp(`<path[^>]*stroke="${colour}"`, "g")) ?? []).length, 2);
  }
  const png = await svgToPNG(svg);
  assert.deepEqual([...png.slice(1, 4)], [80, 78, 71]); // "PNG"
  assert.ok(
    !learningCurveSVG([{ label: "a", episodes: episodes(1) }], { max: false }).includes(
      "stroke-dasharray",
    ),
  );
});
