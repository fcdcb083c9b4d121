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
import { checkArray } from "../ir/check.ts";
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
  checkArray(values, "values", "numbers");
  let best = NaN;
  return values.map((
    v,
  ) => (best = Number.isNaN(best) || v > best ? (Number.isNaN(v) ? best : v) : best));
}

/** Options of {@link tuningCurveSVG}. */
export interface CurveOptions {
  /** Title above the plot. Default "Tuning curve" ({@link bandCurveSVG}: "Tuning curves"). */
  title?: string;
  /**
   * Label of the y axis. Default "best GFLOP/s so far" ({@link bandCurveSVG}: "fraction of
   * optimum").
   */
  y?: string;
  /** Width in pixels. Default 760. */
  width?: number;
  /**
   * Height in pixels of the plot area (title and legend come above it). Default 380; band
   * curves of more than three series draw one panel per series, 130 px each.
   */
  height?: number;
  /**
   * Logarithmic y axis (values that span decades, such as latencies). Default false: a linear
   * axis fitted to the data (and to the baseline), not from 0.
   */
  logY?: boolean;
  /** A linear y axis from 0 (values compared with 0). Default false: fitted to the data. */
  zeroY?: boolean;
  /**
   * A reference drawn as a dashed grey line in every panel and named in the legend: a
   * constant (`value`) or a curve (`x`, `y`), e.g. random search's expected fraction of the
   * optimum. Default: none.
   */
  baseline?: Baseline | Baseline[];
}

/** A reference line of a figure ({@link CurveOptions.baseline}). */
export interface Baseline {
  /** Legend label, e.g. `"random (expected)"`. */
  label: string;
  /** A horizontal line at this y. */
  value?: number;
  /** A curve: its x values (with {@link y}). */
  x?: number[];
  /** A curve: its y values (with {@link x}). */
  y?: number[];
  /** Colour of the dashed line. Default dark grey. */
  colour?: string;
}

const BASELINE_COLOUR = "#555555";

function baselines(b: Baseline | Baseline[] | undefined): Baseline[] {
  return b === undefined ? [] : Array.isArray(b) ? b : [b];
}

/** The baselines' marks (a dashed rule or line each). */
function baselineMarks(bs: Baseline | Baseline[] | undefined): Plot.Markish[] {
  return baselines(bs).map((b) => {
    const style = {
      stroke: b.colour ?? BASELINE_COLOUR,
      strokeWidth: 1.5,
      strokeDasharray: "6,4",
    };
    if (b.value !== undefined) return Plot.ruleY([b.value], style);
    const rows = (b.x ?? []).map((x, i) => ({ x, y: b.y![i] })).filter((r) => Number.isFinite(r.y));
    return Plot.line(rows, { x: "x", y: "y", ...style });
  });
}

function baselineValues(bs: Baseline | Baseline[] | undefined): number[] {
  return baselines(bs).flatMap((b) =>
    b.value !== undefined ? [b.value] : (b.y ?? []).filter(Number.isFinite)
  );
}

/** Legend entries of the baselines. */
function baselineLegend(bs: Baseline | Baseline[] | undefined): LegendLine[] {
  return baselines(bs).map((b) => ({ label: b.label, colour: b.colour ?? BASELINE_COLOUR }));
}

/**
 * The y axis of a figure: log, linear from 0, or linear fitted to `values` (a 5% margin each
 * side, so a flat curve is not drawn on the frame).
 */
function yScale(options: CurveOptions, values: number[], label: string): Plot.ScaleOptions {
  if (options.logY) return { label, grid: true, type: "log" };
  if (options.zeroY) return { label, grid: true, zero: true };
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return { label, grid: true };
  let lo = Math.min(...finite), hi = Math.max(...finite);
  const pad = hi > lo ? (hi - lo) * 0.05 : Math.abs(hi) * 0.05 || 1;
  lo -= pad;
  hi += pad;
  if (Math.min(...finite) >= 0 && lo < 0) lo = 0;
  // A fraction of the optimum never passes 1: no tick above it.
  if (Math.max(...finite) <= 1 && hi > 1) hi = 1;
  return { label, grid: true, domain: [lo, hi], nice: true };
}

/** An SVG tuning curve (best so far against trial number). */
export function tuningCurveSVG(series: CurveSeries[], options: CurveOptions = {}): string {
  checkSeries(series, "values");
  const rows = series.flatMap((s) =>
    s.values.flatMap((v, i) => Number.isNaN(v) ? [] : [{ series: s.label, trial: i + 1, value: v }])
  );
  const labels = series.map((s) => s.label);
  const chart = Plot.plot({
    ...plotFrame(options.width ?? 760, options.height ?? 380),
    x: { label: "trial", grid: true },
    y: yScale(
      options,
      [...rows.map((r) => r.value), ...baselineValues(options.baseline)],
      options.y ?? "best GFLOP/s so far",
    ),
    color: { domain: labels, range: PALETTE },
    marks: [
      ...baselineMarks(options.baseline),
      Plot.line(rows, { x: "trial", y: "value", stroke: "series", curve: "step-after" }),
    ],
  }) as unknown as { outerHTML: string };
  return withHeader(
    chart.outerHTML,
    options.title ?? "Tuning curve",
    labels,
    baselineLegend(options.baseline),
  );
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
  /** Name in the legend. */
  label: string;
  /** The x values (e.g. evaluations), increasing. */
  x: number[];
  /** Median over seeds at each x. */
  median: number[];
  /** First quartile over seeds at each x (the band's lower edge). */
  p25: number[];
  /** Third quartile over seeds at each x (the band's upper edge). */
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

/**
 * An SVG tuning curve with the median line and the p25-p75 band of each series. Up to three
 * series share one panel; more are drawn one panel per series (the same axes, stacked), each
 * showing its band and median over the other series' medians in light grey, so that six bands
 * do not overlap into one blur.
 *
 * @example
 * ```ts
 * import { bandCurveSVG } from "./tuning_curve.ts";
 * const band = { x: [1, 2, 3], median: [0.5, 0.7, 0.9], p25: [0.4, 0.6, 0.8], p75: [0.6, 0.8, 1] };
 * const svg = bandCurveSVG([{ label: "sa", ...band }], {
 *   baseline: { label: "random", x: [1, 2, 3], y: [0.3, 0.5, 0.6] },
 * });
 * if (!svg.includes('stroke-dasharray="6,4"')) throw new Error("the baseline is drawn");
 * ```
 */
export function bandCurveSVG(
  series: BandSeries[],
  options: CurveOptions & {
    /** Title of the x axis. Default `"evaluations"`. */
    x?: string;
  } = {},
): string {
  checkSeries(series, "median");
  const rows = series.flatMap((s) =>
    s.x.map((x, i) => ({ series: s.label, x, median: s.median[i], p25: s.p25[i], p75: s.p75[i] }))
  );
  const labels = series.map((s) => s.label);
  const panels = series.length > 3;
  const y = yScale(
    options,
    [...rows.flatMap((r) => [r.p25, r.p75, r.median]), ...baselineValues(options.baseline)],
    options.y ?? "fraction of optimum",
  );
  const band = { x: "x", y1: "p25", y2: "p75", fill: "series" } as const;
  const median = { x: "x", y: "median", stroke: "series", strokeWidth: 1.75 } as const;
  const chart = Plot.plot({
    ...plotFrame(options.width ?? 760, options.height ?? (panels ? 130 * series.length : 380)),
    // Room on the right for the panel labels (about 7 px a character at 12 px).
    ...(panels ? { marginRight: 16 + 7 * Math.max(...labels.map((l) => l.length)) } : {}),
    x: { label: options.x ?? "evaluations", grid: true },
    y,
    color: { domain: labels, range: PALETTE },
    ...(panels
      ? { fy: { domain: labels, label: null, axis: "right" as const, padding: 0.2 } }
      : {}),
    marks: panels
      ? [
        Plot.frame({ stroke: "#ddd" }),
        Plot.line(rows, {
          x: "x",
          y: "median",
          z: "series",
          fy: "series",
          facet: "exclude",
          stroke: "#c8c8c8",
          strokeWidth: 1,
        }),
        ...baselineMarks(options.baseline),
        Plot.areaY(rows, { ...band, fy: "series", fillOpacity: 0.3 }),
        Plot.line(rows, { ...median, fy: "series" }),
      ]
      : [
        ...baselineMarks(options.baseline),
        Plot.areaY(rows, { ...band, fillOpacity: 0.18 }),
        Plot.line(rows, median),
      ],
  }) as unknown as { outerHTML: string };
  return withHeader(
    chart.outerHTML,
    options.title ?? "Tuning curves",
    labels,
    baselineLegend(options.baseline),
  );
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

/** A dashed reference line's legend entry. */
export interface LegendLine {
  label: string;
  colour: string;
}

/**
 * Puts a title and a legend above a plot's SVG, as one standalone SVG document; `dashed`
 * names the dashed reference lines (baselines), last in the legend.
 */
export function withHeader(
  plot: string,
  title: string,
  labels: string[],
  dashed: LegendLine[] = [],
): string {
  const width = Number(plot.match(/width="(\d+)"/)?.[1] ?? 640);
  const height = Number(plot.match(/height="(\d+)"/)?.[1] ?? 360);
  // Each entry is as wide as its label (about 7 px a character at 12 px).
  const offsets = labels.map((_, i) =>
    labels.slice(0, i).reduce((x, l) => x + 30 + 7 * l.length, 10)
  );
  const legend =
    labels.map((l, i) =>
      `<g transform="translate(${offsets[i]},40)"><rect width="12" height="12" fill="${
        PALETTE[i % PALETTE.length]
      }"/><text x="18" y="10" font-size="12" font-family="sans-serif">${escape(l)}</text></g>`
    ).join("") + dashed.map((d, k) => {
      const x = [...labels, ...dashed.slice(0, k).map((e) => e.label)]
        .reduce((x, l, n) => x + (n < labels.length ? 30 : 36) + 7 * l.length, 10);
      return `<g transform="translate(${x},40)"><line x1="0" x2="22" y1="6" y2="6" stroke="${d.colour}" stroke-width="1.5" stroke-dasharray="6,4"/><text x="28" y="10" font-size="12" font-family="sans-serif">${
        escape(d.label)
      }</text></g>`;
    }).join("");
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
