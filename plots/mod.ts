/**
 * Figures as SVG (and PNG): tuning curves and bands, scatter plots, ratio
 * bars, heat maps, learning curves, Vega-Lite specs and figure bundles.
 *
 * @example
 * ```ts
 * import { tuningCurveSVG } from "./mod.ts";
 * const svg = tuningCurveSVG([{ label: "a", values: [2, 1] }]);
 * if (!svg.startsWith("<svg")) throw new Error();
 * ```
 * @module
 */
export { bandCurveSVG, bestSoFar, svgToPNG, tuningCurveSVG } from "./tuning_curve.ts";
export { scatterSVG } from "./scatter.ts";
export { type RatioBar, type RatioBarsOptions, ratioBarsSVG } from "./ratio_bars.ts";
export { bandCurveSpec, vegaLiteBundle, type VegaLiteSpec, vegaLiteSVG } from "./vegalite.ts";
export { figureBundle, type FigureOptions } from "./figure.ts";
export {
  type HeatCell,
  heatmapCells,
  type HeatmapOptions,
  heatmapSVG,
  type HeatSample,
} from "./heatmap.ts";
export { type LearningCurve, learningCurveSVG } from "./rl_curve.ts";
// Types that the signatures above name.
export type { BandSeries, CurveOptions, CurveSeries } from "./tuning_curve.ts";
export type { BandSpecOptions } from "./vegalite.ts";
export type { HeatAggregate, KnobsOf } from "./heatmap.ts";
export type { LearningCurveOptions } from "./rl_curve.ts";
export type { PNGOptions } from "./figure.ts";
export type { ScatterOptions } from "./scatter.ts";
export type { SparklineOptions } from "./progress_card.ts";
export type { Baseline } from "./tuning_curve.ts";
