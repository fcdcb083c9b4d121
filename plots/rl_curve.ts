/**
 * Learning curves of reinforcement-learning agents: the mean (solid) and the
 * max (dashed) reward of each episode, one colour per series (e.g. per
 * layer of a transfer run), drawn with Observable Plot (DOM from linkedom)
 * as one standalone SVG; {@link svgToPNG} renders it to PNG.
 *
 * @example
 * ```ts
 * import { learningCurveSVG } from "./rl_curve.ts";
 * const svg = learningCurveSVG([
 *   { label: "layer 1", episodes: [{ episode: 0, meanReward: -1, maxReward: 0 }, { episode: 1, meanReward: 0.5, maxReward: 1 }] },
 * ]);
 * if (!svg.startsWith("<svg")) throw new Error();
 * ```
 * @module
 */
import { checkArray, checkObject, described } from "../ir/check.ts";
import * as Plot from "npm:@observablehq/plot@0.6.17";
import { PALETTE, plotFrame, svgToPNG, withHeader } from "./tuning_curve.ts";

export { svgToPNG };

/** One series: a reward summary per episode (`EpisodeStats` of rl/train.ts fits). */
export interface LearningCurve {
  /** Legend label of the series. */
  label: string;
  /** Mean and max reward per episode, in episode order. */
  episodes: readonly { episode: number; meanReward: number; maxReward: number }[];
}

/** Options of {@link learningCurveSVG}. */
export interface LearningCurveOptions {
  /** Title above the plot. Default "Learning curves (solid: mean reward, dashed: max reward)". */
  title?: string;
  /** Label of the y axis. Default "episode reward". */
  y?: string;
  /** Width in pixels. Default 640. */
  width?: number;
  /** Draw the max reward too. Default true. */
  max?: boolean;
}

/** An SVG of learning curves (reward against episode). */
export function learningCurveSVG(
  series: readonly LearningCurve[],
  options: LearningCurveOptions = {},
): string {
  checkArray(series, "series", "{ label, episodes }");
  series.forEach((s, i) => {
    if (typeof s !== "object" || s === null || !Array.isArray(s.episodes)) {
      throw new TypeError(`series[${i}] must be { label, episodes }, got ${described(s)}`);
    }
  });
  checkObject(options, "learningCurveSVG options");
  const finite = (v: number) => Number.isFinite(v);
  const rows = series.flatMap((s) =>
    s.episodes.map((e) => ({
      series: s.label,
      episode: e.episode,
      mean: e.meanReward,
      max: e.maxReward,
    }))
  );
  const labels = series.map((s) => s.label);
  const marks = [
    Plot.line(rows.filter((r) => finite(r.mean)), { x: "episode", y: "mean", stroke: "series" }),
  ];
  if (options.max ?? true) {
    marks.push(
      Plot.line(rows.filter((r) => finite(r.max)), {
        x: "episode",
        y: "max",
        stroke: "series",
        strokeDasharray: "4,3",
        strokeOpacity: 0.8,
      }),
    );
  }
  const chart = Plot.plot({
    ...plotFrame(options.width),
    x: { label: "episode", grid: true },
    y: { label: options.y ?? "episode reward", grid: true },
    color: { domain: labels, range: PALETTE },
    marks,
  }) as unknown as { outerHTML: string };
  return withHeader(
    chart.outerHTML,
    options.title ?? "Learning curves (solid: mean reward, dashed: max reward)",
    labels,
  );
}
