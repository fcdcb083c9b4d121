/**
 * Tuning curves as Vega-Lite specifications, for tools that speak Vega-Lite
 * (JupyterLab renders `application/vnd.vegalite.v5+json` natively; the
 * Vega editor opens the JSON), and rendered server-side to SVG with Vega.
 *
 * @example
 * ```ts
 * import { bandCurveSpec, vegaLiteSVG } from "./vegalite.ts";
 * const spec = bandCurveSpec([{ label: "random", x: [1, 2], median: [0.5, 0.8], p25: [0.4, 0.7], p75: [0.6, 0.9] }]);
 * const svg = await vegaLiteSVG(spec);
 * ```
 * @module
 */
import * as vega from "npm:vega@6.2.0";
import * as vl from "npm:vega-lite@6.4.1";
import { figureBundle } from "./figure.ts";
import { type BandSeries, PALETTE } from "./tuning_curve.ts";

/** A Vega-Lite specification (top-level JSON object). */
export type VegaLiteSpec = Record<string, unknown>;

/** Options of {@link bandCurveSpec}. */
export interface BandSpecOptions {
  /** Title above the chart. Default `"Tuning curves"`. */
  title?: string;
  /** Title of the x axis. Default `"evaluations"`. */
  x?: string;
  /** Title of the y axis. Default `"fraction of optimum"`. */
  y?: string;
  /** Width of the plot area, pixels. Default 560. */
  width?: number;
  /** Height of the plot area, pixels. Default 300. */
  height?: number;
}

/**
 * A Vega-Lite specification of tuning curves: per series, the median line and
 * the p25-p75 band over seeds, one colour per series (tunebook's palette),
 * with the data inline.
 */
export function bandCurveSpec(series: BandSeries[], options: BandSpecOptions = {}): VegaLiteSpec {
  const values = series.flatMap((s) =>
    s.x.map((x, i) => ({
      series: s.label,
      x,
      median: finiteOrNull(s.median[i]),
      p25: finiteOrNull(s.p25[i]),
      p75: finiteOrNull(s.p75[i]),
    }))
  );
  const labels = series.map((s) => s.label);
  const color = {
    field: "series",
    type: "nominal",
    title: null,
    scale: { domain: labels, range: PALETTE.slice(0, Math.max(1, labels.length)) },
  };
  const x = { field: "x", type: "quantitative", title: options.x ?? "evaluations" };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: options.title ?? "Tuning curves",
    width: options.width ?? 560,
    height: options.height ?? 300,
    data: { values },
    layer: [
      {
        mark: { type: "area", opacity: 0.15 },
        encoding: {
          x,
          y: { field: "p25", type: "quantitative", title: options.y ?? "fraction of optimum" },
          y2: { field: "p75" },
          color,
        },
      },
      {
        mark: { type: "line", interpolate: "step-after" },
        encoding: { x, y: { field: "median", type: "quantitative" }, color },
      },
    ],
  };
}

function finiteOrNull(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}

/** Renders a Vega-Lite specification to a standalone SVG document (no browser needed). */
export async function vegaLiteSVG(spec: VegaLiteSpec): Promise<string> {
  // deno-lint-ignore no-explicit-any
  const compiled = vl.compile(spec as any).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * A Jupyter MIME bundle of a specification: the Vega-Lite JSON (rendered
 * interactively by JupyterLab), its PNG (`image/png`, base64, rendered from
 * {@link vegaLiteSVG} at twice its size: what nbconvert's HTML and PDF
 * exports and notebook viewers show) and a line of text. The SVG is left
 * out on purpose: nbconvert's HTML export prefers an SVG to a PNG and then
 * strips its shapes (see figure.ts), and a `text/html` form, the other way
 * round that, would hide the interactive view in JupyterLab. `vegaLiteSVG`
 * gives the SVG.
 */
export async function vegaLiteBundle(spec: VegaLiteSpec): Promise<Record<string, unknown>> {
  const figure = await figureBundle(await vegaLiteSVG(spec), {
    alt: typeof spec.title === "string" ? spec.title : "[Vega-Lite chart]",
  });
  return {
    "application/vnd.vegalite.v5+json": spec,
    "image/png": figure["image/png"],
    "text/plain": figure["text/plain"],
  };
}
