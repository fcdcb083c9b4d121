/**
 * What a live progress display shows ({@link progressHTML} while a run
 * goes, {@link progressCardSVG} once it is done) and its small line chart
 * ({@link sparklineSVG}): pure renderers of a {@link Progress} (defined here, re-exported by tuner/progress.ts)
 * and of the series `liveProgress` (tuner/jupyter.ts) keeps.
 *
 * @example
 * ```ts
 * import { progressCardSVG } from "./progress_card.ts";
 * const p = { done: 2, total: 2, valid: 2, errors: 0, bestGflops: 3, elapsed: 1 };
 * const svg = progressCardSVG("matmul 128", p, [1, 3]);
 * if (!svg.includes("best GFLOP/s so far: 1.00 first, 3.00 last")) throw new Error();
 * ```
 * @module
 */
/** What a tuning run reports as it goes. */
export interface Progress {
  /** Distinct candidates measured so far. */
  done: number;
  /** Trials requested. */
  total: number;
  /** Measured with a correct result (omitted for progress that is not measurement). */
  valid?: number;
  /** Failed, any error kind (omitted with `valid`). */
  errors?: number;
  /** What is counted, when not trials (e.g. `"runs"`). */
  unit?: string;
  /** Best GFLOP/s so far, if any candidate was valid. */
  bestGflops?: number;
  /** Seconds since the run (or resume) started. */
  elapsed: number;
}

function escapeHTML(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(
    /"/g,
    "&quot;",
  );
}

/** Options of {@link sparklineSVG}. */
export interface SparklineOptions {
  /** Width in pixels. Default 160. */
  width?: number;
  /** Height in pixels. Default 32. */
  height?: number;
  /** Line colour. Default `"#4269d0"`. */
  stroke?: string;
}

/**
 * A small inline SVG line of a series (e.g. best GFLOP/s so far after each
 * trial) with a dot on its last value; NaN values are skipped. An empty
 * series gives an empty frame.
 */
export function sparklineSVG(values: readonly number[], options: SparklineOptions = {}): string {
  const w = options.width ?? 160, h = options.height ?? 32, pad = 2;
  const pts = values.flatMap((v, i) => (Number.isFinite(v) ? [[i, v] as const] : []));
  let path = "";
  if (pts.length > 0) {
    const lo = Math.min(...pts.map((p) => p[1])), hi = Math.max(...pts.map((p) => p[1]));
    const n = Math.max(1, values.length - 1);
    const x = (i: number) => pad + (i / n) * (w - 2 * pad);
    const y = (v: number) => hi === lo ? h / 2 : h - pad - ((v - lo) / (hi - lo)) * (h - 2 * pad);
    const coords = pts.map(([i, v]) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`);
    if (coords.length === 1) coords.push(coords[0]);
    const stroke = options.stroke ?? "#4269d0";
    const [lastX, lastY] = coords.at(-1)!.split(",");
    path = `<polyline fill="none" stroke="${stroke}" stroke-width="1.5" points="${
      coords.join(" ")
    }"/><circle cx="${lastX}" cy="${lastY}" r="2" fill="${stroke}"/>`;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" style="vertical-align: middle"><rect width="${w}" height="${h}" fill="#f6f6f6"/>${path}</svg>`;
}

/** Progress as words: `3/8 trials, valid 3, errors 0, best 1.50 GFLOP/s, 0.4 s`. */
function progressText(p: Progress): string {
  const counts = p.valid === undefined ? "" : `, valid ${p.valid}, errors ${p.errors}`;
  const best = p.bestGflops !== undefined
    ? `, best ${p.bestGflops.toFixed(2)} GFLOP/s`
    : p.valid === undefined
    ? ""
    : ", best -";
  return `${p.done}/${p.total} ${p.unit ?? "trials"}${counts}${best}, ${p.elapsed.toFixed(1)} s`;
}

/**
 * What a progress display's sparkline shows: the best GFLOP/s so far when
 * the progress counts measured trials, else the seconds each unit took
 * (e.g. `"s per run"`).
 */
export function seriesLabel(p: Progress): string {
  return p.valid !== undefined
    ? "best GFLOP/s so far"
    : `s per ${(p.unit ?? "trials").replace(/s$/, "")}`;
}

/**
 * The HTML of a progress display: title, a progress bar, trials done, valid
 * and failed counts, best GFLOP/s so far, elapsed seconds and a sparkline
 * of `history` (see {@link LiveProgress.history}) when it holds a value.
 */
export function progressHTML(title: string, p: Progress, history: readonly number[]): string {
  const spark = history.some(Number.isFinite)
    ? ` <span title="${escapeHTML(seriesLabel(p))}">${sparklineSVG(history)}</span>`
    : "";
  return `<div style="font-family: sans-serif; font-size: 13px">` +
    `<b>${escapeHTML(title)}</b> ` +
    `<progress value="${p.done}" max="${p.total}" style="vertical-align: middle"></progress> ` +
    `${escapeHTML(progressText(p))}${spark}</div>`;
}

function formatValue(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(2);
}

/**
 * A progress display as one standalone SVG (the final state of
 * {@link liveProgress}): the title, a filled bar, the counts and times, and
 * the sparkline of `history` with what it shows and its range; without a
 * value to draw it says so instead of leaving an empty frame.
 */
export function progressCardSVG(title: string, p: Progress, history: readonly number[]): string {
  const text = progressText(p);
  const finite = history.filter(Number.isFinite);
  const label = seriesLabel(p);
  const range = finite.length
    ? `${label}: ${formatValue(finite[0])} first, ${formatValue(finite.at(-1)!)} last` +
      (p.valid === undefined
        ? `, ${formatValue(Math.min(...finite))} to ${formatValue(Math.max(...finite))}`
        : "")
    : p.valid === undefined
    ? "nothing timed yet"
    : "no valid candidate yet";
  // About 7 px a character at 12-13 px sans-serif.
  const width = Math.ceil(
    Math.max(360, 20 + 7.5 * title.length, 230 + 7 * text.length, 180 + 6.5 * range.length),
  );
  const frac = p.total > 0 ? Math.min(1, p.done / p.total) : 1;
  const t = (x: number, y: number, size: number, s: string, extra = "") =>
    `<text x="${x}" y="${y}" font-size="${size}" font-family="sans-serif"${extra}>${
      escapeHTML(s)
    }</text>`;
  const spark = finite.length
    ? sparklineSVG(history).replace(/^<svg /, '<svg x="10" y="50" ') +
      t(180, 70, 11, range, ' fill="#555"')
    : t(10, 70, 11, range, ' fill="#555"');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="92" viewBox="0 0 ${width} 92">` +
    `<rect width="100%" height="100%" fill="white"/>` +
    t(10, 20, 13, title, ' font-weight="bold"') +
    `<rect x="10" y="30" width="200" height="10" rx="2" fill="#e4e4e4"/>` +
    `<rect x="10" y="30" width="${(200 * frac).toFixed(1)}" height="10" rx="2" fill="#4269d0"/>` +
    t(220, 39, 12, text) + spark + `</svg>`;
}
