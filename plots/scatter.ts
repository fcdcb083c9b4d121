/**
 * Scatter plots (predicted against measured, for cost models) drawn
 * server-side with Observable Plot, with the same header as the tuning curves.
 *
 * @example
 * ```ts
 * import { scatterSVG } from "./scatter.ts";
 * const svg = scatterSVG([{ x: 1, y: 2 }, { x: 2, y: 3 }], { title: "t", x: "measured", y: "predicted" });
 * if (!svg.startsWith("<svg")) throw new Error();
 * ```
 * @module
 */
import { checkArray, checkObject } from "../ir/check.ts";
import * as Plot from "npm:@observablehq/plot@0.6.17";
import { plotFrame, withHeader } from "./tuning_curve.ts";

/** Options of {@link scatterSVG}. */
export interface ScatterOptions {
  /** Title above the plot. */
  title: string;
  /** Label of the x axis. */
  x: string;
  /** Label of the y axis. */
  y: string;
  /** Draw the y = x diagonal. Default true. */
  diagonal?: boolean;
}

/** An SVG scatter plot of points. */
export function scatterSVG(points: { x: number; y: number }[], o: ScatterOptions): string {
  checkArray(points, "points", "{ x, y }");
  checkObject(o, "scatterSVG options");
  const lo = Math.min(...points.flatMap((p) => [p.x, p.y])),
    hi = Math.max(...points.flatMap((p) => [p.x, p.y]));
  const chart = Plot.plot({
    ...plotFrame(640, 420),
    x: { label: o.x, grid: true },
    y: { label: o.y, grid: true },
    marks: [
      ...(o.diagonal === false
        ? []
        : [Plot.line([[lo, lo], [hi, hi]], { stroke: "#9498a0", strokeDasharray: "4 3" })]),
      Plot.dot(points, { x: "x", y: "y", r: 2, fill: "#4269d0", fillOpacity: 0.5 }),
    ],
  }) as unknown as { outerHTML: string };
  return withHeader(chart.outerHTML, o.title, []);
}
