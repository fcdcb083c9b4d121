/**
 * Tuning curves: best-so-far performance against trials, one line per
 * series, drawn server-side with Observable Plot (DOM from linkedom) as SVG,
 * and rendered to PNG with resvg ({@link svgToPNG}, from figure.ts).
 *
 * @example
 * ```ts
 * import { bestSoFar, tuningCurveSVG } from "./tuning_curve.ts";
 * const svg = tuningCurveSVG([{ label: "random", values: bestSoFar([1, 3, 2, 5]) }]);
 * if (!svg.startsWith("<svg")) throw new Error();
 * ```
 * @module
 */
import * as Plot from "npm:@observablehq/plot@0.6.17";
import { parseHTML } from "npm:linkedom@0.18.12";

/** Renders an SVG to PNG bytes (resvg); see plots/figure.ts. */
export { svgToPNG } from "./figure.ts";

/** One line of a tuning curve. */
export interface CurveSeries {
  /** Legend label, e.g. `"matmul 512"`. */
  label: string;
  /** Value after each trial (use {@link bestSoFar}); NaN before the first valid one. */
  values: number[];
}

/** Running maximum of a list, ignoring NaN (a failed trial keeps the previous best). */
export function bestSoFar(values: number[]): number[] {
  let best = NaN;
  return values.map((
    v,
  ) => (best = Number.isNaN(best) || v > best ? (Number.isNaN(v) ? best : v) : best));
}

/** Options of {@link tuningCurveSVG}. */
export interface CurveOptions {
  /** Title above the plot. Default "Tuning curve". */
  title?: string;
  /** Label of the y axis. Default "best GFLOP/s so far". */
  y?: string;
  /** Width in pixels. Default 640. */
  width?: number;
  /** Logarithmic y axis (values that span decades, such as latencies). Default false: linear from 0. */
  logY?: boolean;
}

/** An SVG tuning curve (best so far against trial number). */
export function tuningCurveSVG(series: CurveSeries[], options: CurveOptions = {}): string {
  checkSeries(series, "values");
  const rows = series.flatMap((s) =>
    s.values.flatMap((v, i) => Number.isNaN(v) ? [] : [{ series: s.label, trial: i + 1, value: v }])
  );
  const labels = series.map((s) => s.label);
  const chart = Plot.plot({
    ...plotFrame(options.width),
    x: { label: "trial", grid: true },
    y: {
      label: options.y ?? "best GFLOP/s so far",
      grid: true,
      ...(options.logY ? { type: "log" as const } : { zero: true }),
    },
    color: { domain: labels, range: PALETTE },
    marks: [Plot.line(rows, { x: "trial", y: "value", stroke: "series", curve: "step-after" })],
  }) as unknown as { outerHTML: string };
  return withHeader(chart.outerHTML, options.title ?? "Tuning curve", labels);
}

/**
 * A fresh server-side document (linkedom) for `Plot.plot({ document })`.
 * linkedom's types lack `document` on the returned window; it is there at
 * run time.
 */
export function plotDocument(): NonNullable<Plot.PlotOptions["document"]> {
  return (parseHTML("<!DOCTYPE html><html><body></body></html>") as unknown as {
    document: NonNullable<Plot.PlotOptions["document"]>;
  }).document;
}

/**
 * The frame every tunebook chart shares (Plot options): a fresh server-side
 * document, `width` (default 640) by `height` pixels, room for y labels,
 * white background, 12px sans-serif.
 */
export function plotFrame(width = 640, height = 360): Plot.PlotOptions {
  return {
    document: plotDocument(),
    width,
    height,
    marginLeft: 56,
    style: { background: "white", fontFamily: "sans-serif", fontSize: "12px" },
  };
}

/** A series summarised over seeds: median and quartile band at each x. */
export interface BandSeries {
  label: string;
  x: number[];
  median: number[];
  p25: number[];
  p75: number[];
}

/** Throws a TypeError naming `series` unless it is a list of `{ label, <field> }` objects. */
function checkSeries(series: unknown, field: string): void {
  const ok = Array.isArray(series) &&
    series.every((s) => typeof s === "object" && s !== null && Array.isArray(s[field]));
  if (!ok) {
    const got = Array.isArray(series) ? "a list with an entry lacking it" : typeof series;
    throw new TypeError(`series must be a list of { label, ${field} } objects, got ${got}`);
  }
}

/** An SVG tuning curve with the median line and the p25-p75 band of each series. */
export function bandCurveSVG(
  series: BandSeries[],
  options: CurveOptions & { x?: string } = {},
): string {
  checkSeries(series, "median");
  const rows = series.flatMap((s) =>
    s.x.map((x, i) => ({ series: s.label, x, median: s.median[i], p25: s.p25[i], p75: s.p75[i] }))
  );
  const labels = series.map((s) => s.label);
  const chart = Plot.plot({
    ...plotFrame(options.width),
    x: { label: options.x ?? "evaluations", grid: true },
    y: { label: options.y ?? "fraction of optimum", grid: true, zero: true },
    color: { domain: labels, range: PALETTE },
    marks: [
      Plot.areaY(rows, { x: "x", y1: "p25", y2: "p75", fill: "series", fillOpacity: 0.15 }),
      Plot.line(rows, { x: "x", y: "median", stroke: "series" }),
    ],
  }) as unknown as { outerHTML: string };
  return withHeader(chart.outerHTML, options.title ?? "Tuning curves", labels);
}

/** Colours of the series, in order (Observable's "observable10"). */
export const PALETTE = [
  "#4269d0",
  "#efb118",
  "#ff725c",
  "#6cc5b0",
  "#3ca951",
  "#ff8ab7",
  "#a463f2",
  "#97bbf5",
  "#9c6b4e",
  "#9498a0",
];

/** Puts a title and a legend above a plot's SVG, as one standalone SVG document. */
export function withHeader(plot: string, title: string, labels: string[]): string {
  const width = Number(plot.match(/width="(\d+)"/)?.[1] ?? 640);
  const height = Number(plot.match(/height="(\d+)"/)?.[1] ?? 360);
  // Each entry is as wide as its label (about 7 px a character at 12 px).
  const offsets = labels.map((_, i) =>
    labels.slice(0, i).reduce((x, l) => x + 30 + 7 * l.length, 10)
  );
  const legend = labels.map((l, i) =>
    `<g transform="translate(${offsets[i]},40)"><rect width="12" height="12" fill="${
      PALETTE[i % PALETTE.length]
    }"/><text x="18" y="10" font-size="12" font-family="sans-serif">${escape(l)}</text></g>`
  ).join("");
  const inner = plot.replace(/^<svg/, `<svg y="60"`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${
    height + 60
  }" viewBox="0 0 ${width} ${
    height + 60
  }"><rect width="100%" height="100%" fill="white"/><text x="10" y="22" font-size="15" font-family="sans-serif">${
    escape(title)
  }</text>${legend}${inner}</svg>`;
}

function escape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
