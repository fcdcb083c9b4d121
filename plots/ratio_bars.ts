/**
 * Ratios by row as horizontal bars (tunebook / oneDNN per layer of a
 * network), with a dashed line at a target ratio and each bar labelled with
 * its value; bars below the target are drawn in another colour. Drawn
 * server-side with Observable Plot, with the header of the tuning curves.
 *
 * @example
 * ```ts
 * import { ratioBarsSVG } from "./ratio_bars.ts";
 * const svg = ratioBarsSVG([{ label: "conv 3x3", ratio: 0.93 }, { label: "conv 1x1", ratio: 0.84 }], {
 *   title: "tunebook / oneDNN", target: 0.9,
 * });
 * if (!svg.startsWith("<svg") || !svg.includes("0.84")) throw new Error();
 * ```
 * @module
 */
import * as Plot from "npm:@observablehq/plot@0.6.17";
import { plotFrame, withHeader } from "./tuning_curve.ts";

/** One bar. */
export interface RatioBar {
  /** Label of the bar. */
  label: string;
  /** The ratio drawn; 1 is parity. */
  ratio: number;
}

/** Options of {@link ratioBarsSVG}. */
export interface RatioBarsOptions {
  /** Title of the figure. */
  title: string;
  /** Label of the ratio axis. Default "ratio". */
  x?: string;
  /** The dashed line, and the colour boundary. Default 1. */
  target?: number;
}

const AT_TARGET = "#4269d0", BELOW = "#e45756";

/** An SVG bar chart of ratios, one row per bar in the given order. */
export function ratioBarsSVG(bars: readonly RatioBar[], o: RatioBarsOptions): string {
  const target = o.target ?? 1;
  const rows = bars.map((b) => ({ ...b, text: b.ratio.toFixed(2), below: b.ratio < target }));
  const longest = Math.max(0, ...bars.map((b) => b.label.length));
  const chart = Plot.plot({
    ...plotFrame(720, 40 + 26 * Math.max(1, bars.length)),
    marginLeft: Math.max(56, 7 * longest + 12),
    marginRight: 40,
    x: {
      label: o.x ?? "ratio",
      grid: true,
      domain: [0, Math.max(target, ...bars.map((b) => b.ratio)) * 1.08],
    },
    y: { label: null, domain: bars.map((b) => b.label) },
    marks: [
      Plot.barX(rows, {
        x: "ratio",
        y: "label",
        fill: (d: { below: boolean }) => d.below ? BELOW : AT_TARGET,
      }),
      Plot.text(rows, { x: "ratio", y: "label", text: "text", dx: 18, fontSize: 11 }),
      Plot.ruleX([target], { stroke: "#30343b", strokeDasharray: "4 3" }),
    ],
  }) as unknown as { outerHTML: string };
  return withHeader(chart.outerHTML, o.title, []);
}
