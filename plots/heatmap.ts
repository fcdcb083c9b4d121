/**
 * Design-space heat maps, as in the grid-search figures of auto-tuning
 * studies: for two knobs of a knob space, each cell is coloured by the best
 * (or mean) value (e.g. throughput, or fraction of optimum) over all the
 * measured configurations with those two knob values, whatever the other
 * knobs. Drawn server-side with Observable Plot, with the header of the
 * tuning curves and a colour ramp.
 *
 * @example
 * ```ts
 * import { heatmapSVG } from "./heatmap.ts";
 * const knobs = [
 *   { name: "tile_x", options: [1, 2, 4] },
 *   { name: "tile_y", options: [1, 2] },
 *   { name: "unroll", options: [false, true] },
 * ];
 * const samples = [
 *   { point: [0, 0, 0], value: 1 },
 *   { point: [2, 1, 1], value: 3 },
 *   { point: [2, 1, 0], value: 2 },
 * ];
 * const svg = heatmapSVG({ knobs }, samples, { x: "tile_x", y: "tile_y" });
 * if (!svg.startsWith("<svg")) throw new Error();
 * ```
 * @module
 */
import { checkArray, checkKnobSpace, checkObject, checkString } from "../ir/check.ts";
import * as Plot from "npm:@observablehq/plot@0.6.17";
import { PALETTE, plotDocument, withHeader } from "./tuning_curve.ts";

/** What a heat map needs of a knob space: its knobs' names and options, in point order. */
export interface KnobsOf {
  /** The knobs, in the order of a point's indices. */
  knobs: readonly { name: string; options: readonly unknown[] }[];
}

/** One measured configuration: its point (an option index per knob) and a value, higher is better. */
export interface HeatSample {
  /** The configuration: an option index per knob. */
  point: readonly number[];
  /** E.g. GFLOP/s or fraction of optimum; NaN or non-finite for an invalid configuration. */
  value: number;
}

/** One cell of a heat map. */
export interface HeatCell {
  /** Label of the x knob's option. */
  x: string;
  /** Label of the y knob's option. */
  y: string;
  /** Aggregate of the valid values of the cell; NaN when it has none. */
  value: number;
  /** Valid samples in the cell. */
  count: number;
  /** Samples in the cell, valid or not. */
  total: number;
}

/** How the other knobs are summarised: `"max"` (best) or `"mean"`. */
export type HeatAggregate = "max" | "mean";

/** Options of {@link heatmapSVG}. */
export interface HeatmapOptions {
  /** Name of the knob on the x axis. */
  x: string;
  /** Name of the knob on the y axis. */
  y: string;
  /** Summary over the other knobs. Default `"max"`. */
  aggregate?: HeatAggregate;
  /** Title above the plot. Default `"<aggregate> <value> over the other knobs"`. */
  title?: string;
  /** What a value is, for the colour legend. Default `"throughput"`. */
  value?: string;
  /** Print each cell's value in it. Default: when there are at most 400 cells. */
  labels?: boolean;
  /** Width in pixels. Default: 48 per x option or as wide as the title, between 360 and 960. */
  width?: number;
}

/** The label of a knob option: `[2, 8]` as `2x8`, others as text. */
export function optionLabel(v: unknown): string {
  if (Array.isArray(v)) return v.map(optionLabel).join("x");
  return typeof v === "string" ? v : JSON.stringify(v);
}

function knobIndex(space: KnobsOf, name: string): number {
  const i = space.knobs.findIndex((k) => k.name === name);
  if (i < 0) {
    throw new RangeError(
      `No knob "${name}" in the space; knobs: ${space.knobs.map((k) => k.name).join(", ")}`,
    );
  }
  return i;
}

/**
 * The cells of a heat map of knobs `x` and `y` (every option pair, x
 * varying fastest), each the max or mean of the valid sample values with
 * those options.
 *
 * @throws {RangeError} when a knob is unknown, `x` equals `y`, or a sample's point has the wrong length
 */
export function heatmapCells(
  space: KnobsOf,
  samples: readonly HeatSample[],
  o: { x: string; y: string; aggregate?: HeatAggregate },
): HeatCell[] {
  const xi = knobIndex(space, o.x), yi = knobIndex(space, o.y);
  if (xi === yi) throw new RangeError(`A heat map needs two different knobs, got "${o.x}" twice`);
  const xs = space.knobs[xi].options, ys = space.knobs[yi].options;
  const agg = o.aggregate ?? "max";
  if (agg !== "max" && agg !== "mean") {
    throw new RangeError(`aggregate must be "max" or "mean", got "${agg}"`);
  }
  const sum = new Float64Array(xs.length * ys.length);
  const max = new Float64Array(xs.length * ys.length).fill(-Infinity);
  const count = new Int32Array(xs.length * ys.length), total = new Int32Array(count.length);
  for (const s of samples) {
    if (s.point.length !== space.knobs.length) {
      throw new RangeError(
        `Point ${JSON.stringify(s.point)} is not in this ${space.knobs.length}-knob space`,
      );
    }
    const c = s.point[yi] * xs.length + s.point[xi];
    total[c]++;
    if (!Number.isFinite(s.value)) continue;
    count[c]++;
    sum[c] += s.value;
    if (s.value > max[c]) max[c] = s.value;
  }
  return Array.from(count, (n, c) => ({
    x: optionLabel(xs[c % xs.length]),
    y: optionLabel(ys[Math.floor(c / xs.length)]),
    value: n === 0 ? NaN : agg === "max" ? max[c] : sum[c] / n,
    count: n,
    total: total[c],
  }));
}

function format(v: number): string {
  const a = Math.abs(v);
  return a >= 100
    ? v.toFixed(0)
    : a >= 10
    ? v.toFixed(1)
    : a >= 0.01
    ? v.toFixed(2)
    : v.toExponential(1);
}

/**
 * An SVG heat map of knobs `x` and `y`: cells coloured by the best (or mean)
 * value over the other knobs (viridis, brighter is higher), grey where no
 * configuration was valid, the best cell outlined.
 */
export function heatmapSVG(
  space: KnobsOf,
  samples: readonly HeatSample[],
  options: HeatmapOptions,
): string {
  checkKnobSpace(space, "space");
  checkArray(samples, "samples", "{ point, value }");
  const o = checkObject(options, "heatmap options");
  checkString(o.x, "x", { what: "a knob name" });
  checkString(o.y, "y", { what: "a knob name" });
  const cells = heatmapCells(space, samples, options);
  const document = plotDocument();
  const xDomain = space.knobs[knobIndex(space, options.x)].options.map(optionLabel);
  const yDomain = space.knobs[knobIndex(space, options.y)].options.map(optionLabel);
  const valid = cells.filter((c) => c.count > 0);
  const lo = valid.length ? Math.min(...valid.map((c) => c.value)) : 0;
  const hi = valid.length ? Math.max(...valid.map((c) => c.value)) : 1;
  const best = valid.filter((c) => c.value === hi);
  const agg = options.aggregate ?? "max";
  const label = options.value ?? "throughput";
  const title = options.title ?? `${agg} ${label} over the other knobs`;
  // Wide enough for the cells and for the title (about 8 px a character at 15 px).
  const width = options.width ??
    Math.min(960, Math.max(360, 80 + 48 * xDomain.length, 20 + 8 * title.length));
  const showLabels = options.labels ?? cells.length <= 400;
  const color = {
    type: "linear" as const,
    scheme: "viridis" as const,
    domain: lo === hi ? [lo - 1, hi + 1] : [lo, hi],
    label: `${agg} ${label}`,
  };
  const chart = Plot.plot({
    document,
    width,
    height: Math.min(720, Math.max(200, 60 + 32 * yDomain.length)),
    marginLeft: 80,
    marginBottom: 48,
    style: { background: "white", fontFamily: "sans-serif", fontSize: "12px" },
    x: { label: options.x, domain: xDomain, tickRotate: xDomain.length > 8 ? -45 : 0 },
    y: { label: options.y, domain: yDomain },
    color,
    marks: [
      Plot.cell(cells.filter((c) => c.count === 0), { x: "x", y: "y", fill: "#e4e4e4" }),
      Plot.cell(valid, { x: "x", y: "y", fill: "value", inset: 0.5 }),
      Plot.cell(best, { x: "x", y: "y", stroke: PALETTE[2], strokeWidth: 3, fill: "none" }),
      ...(showLabels
        ? [
          Plot.text(valid, {
            x: "x",
            y: "y",
            text: (c: HeatCell) => format(c.value),
            fill: (c: HeatCell) => (c.value - lo) / (hi - lo || 1) > 0.6 ? "black" : "white",
          }),
        ]
        : []),
    ],
  }) as unknown as { outerHTML: string };
  const header = withHeader(chart.outerHTML, title, []);
  return header.replace(/<\/svg>$/, `${ramp(color)}</svg>`);
}

/**
 * A colour ramp on the legend row of the header (y 40-52): the label, the
 * low value, a gradient bar and the high value. Plot's own ramp needs a canvas.
 */
function ramp(
  color: { type: "linear"; scheme: "viridis"; domain: number[]; label: string },
): string {
  const scale = Plot.scale({ color });
  const stops = Array.from({ length: 11 }, (_, i) => {
    const v = color.domain[0] + (i / 10) * (color.domain[1] - color.domain[0]);
    return `<stop offset="${i * 10}%" stop-color="${scale.apply(v)}"/>`;
  }).join("");
  const text = (x: number, s: string, anchor = "start") =>
    `<text x="${x}" y="50" font-size="12" font-family="sans-serif" text-anchor="${anchor}">${
      s.replace(/&/g, "&amp;").replace(/</g, "&lt;")
    }</text>`;
  const bar = 10 + 7 * color.label.length + 12 + 7 * format(color.domain[0]).length + 6;
  return `<defs><linearGradient id="heatmap-ramp">${stops}</linearGradient></defs>` +
    text(10, color.label) + text(bar - 6, format(color.domain[0]), "end") +
    `<rect x="${bar}" y="40" width="160" height="12" fill="url(#heatmap-ramp)"/>` +
    text(bar + 166, format(color.domain[1]));
}
