import assert from "node:assert/strict";
import { heatmapCells, heatmapSVG, optionLabel } from "./heatmap.ts";

/** Rects of the cell group drawn with a constant attribute (e.g. the grey of empty cells). */
function rectsOf(svg: string, attr: string): number {
  const group = svg.match(new RegExp(`<g [^>]*${attr}[^>]*aria-label="cell">(.*?)</g>`));
  return (group?.[1].match(/<rect/g) ?? []).length;
}

const space = {
  knobs: [
    { name: "tile", options: [[1, 8], [2, 4], [8, 1]] },
    { name: "unroll", options: [false, true] },
    { name: "vec", options: [1, 4] },
  ],
};
const samples = [
  { point: [0, 0, 0], value: 1 },
  { point: [0, 0, 1], value: 3 },
  { point: [1, 1, 0], value: 2 },
  { point: [1, 1, 1], value: NaN },
  { point: [2, 0, 0], value: Infinity },
];

Deno.test("heatmapCells() takes the best of the other knobs by default", () => {
  const cells = heatmapCells(space, samples, { x: "tile", y: "unroll" });
  assert.equal(cells.length, 6);
  assert.deepEqual(cells.map((c) => [c.x, c.y]), [
    ["1x8", "false"],
    ["2x4", "false"],
    ["8x1", "false"],
    ["1x8", "true"],
    ["2x4", "true"],
    ["8x1", "true"],
  ]);
  assert.equal(cells[0].value, 3);
  assert.equal(cells[0].count, 2);
  assert.equal(cells[4].value, 2, "an invalid (NaN) sample is left out");
  assert.equal(cells[4].total, 2);
  assert.ok(Number.isNaN(cells[2].value), "a cell with only invalid samples has no value");
  assert.ok(Number.isNaN(cells[5].value), "a cell without samples has no value");
});

Deno.test("heatmapCells() averages the valid samples with aggregate mean", () => {
  const cells = heatmapCells(space, samples, { x: "tile", y: "unroll", aggregate: "mean" });
  assert.equal(cells[0].value, 2);
});

Deno.test("heatmapCells() names an unknown or repeated knob and a wrong point", () => {
  assert.throws(
    () => heatmapCells(space, samples, { x: "tile", y: "order" }),
    /No knob "order" in the space; knobs: tile, unroll, vec/,
  );
  assert.throws(() => heatmapCells(space, samples, { x: "vec", y: "vec" }), /two different/);
  assert.throws(
    () => heatmapCells(space, [{ point: [0, 0], value: 1 }], { x: "tile", y: "vec" }),
    /not in this 3-knob space/,
  );
});

Deno.test("optionLabel() prints split factors as AxB", () => {
  assert.equal(optionLabel([2, 4, 8]), "2x4x8");
  assert.equal(optionLabel(true), "true");
  assert.equal(optionLabel("auto"), "auto");
});

Deno.test("heatmapSVG() draws one cell per option pair, outlines the best and is deterministic", () => {
  const svg = heatmapSVG(space, samples, { x: "tile", y: "unroll", title: "t & u", value: "GF" });
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.ok(svg.endsWith("</svg>"));
  assert.match(svg, />t &amp; u</);
  assert.match(svg, />max GF</);
  assert.equal(rectsOf(svg, 'fill="#e4e4e4"'), 4, "four cells without a value");
  assert.equal(rectsOf(svg, 'stroke="#ff725c"'), 1, "one best cell");
  assert.match(svg, />3\.00</);
  assert.equal(
    svg,
    heatmapSVG(space, samples, { x: "tile", y: "unroll", title: "t & u", value: "GF" }),
  );
  const none = heatmapSVG(space, [], { x: "tile", y: "unroll" });
  assert.equal(rectsOf(none, 'fill="#e4e4e4"'), 6);
});
