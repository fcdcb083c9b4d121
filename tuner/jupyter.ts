/**
 * Jupyter helpers for notebooks on the Deno kernel: a live progress display
 * for tuning runs (one output updated in place), and objects that render
 * themselves (traces, records, SVG plots) through Deno's
 * `Symbol.for("Jupyter.display")` protocol.
 *
 * Map: {@link liveProgress} (an `onProgress` callback for `runSession`),
 * {@link displayTrace}, {@link displayRecord}, {@link displaySVG},
 * {@link displayHTML}, {@link displayCode}, {@link htmlTable}; {@link show} (displays one of them,
 * or prints its text outside Jupyter); the pure renderers {@link progressHTML}
 * and {@link sparklineSVG}; {@link inJupyter}.
 *
 * Outside the kernel (`deno run`, tests) `Deno.jupyter` throws on access:
 * the progress display then falls back to one stderr line per update.
 *
 * @example
 * ```ts
 * import { displayTrace, JUPYTER_DISPLAY, liveProgress } from "./jupyter.ts";
 * const t = displayTrace({ version: 1, workload: { name: "matmul", shape: [8, 8, 8] }, insts: [] });
 * const bundle = t[JUPYTER_DISPLAY]();
 * if (!bundle["text/html"].startsWith("<pre")) throw new Error();
 * const progress = liveProgress("matmul 8", { broadcast: () => Promise.resolve() });
 * progress({ done: 1, total: 2, valid: 1, errors: 0, bestGflops: 1.5, elapsed: 0.1 });
 * await progress.done();
 * ```
 * @module
 */
import type { CandidateRow } from "../datasets/db.ts";
import { printTrace, type Trace } from "../ir/trace.ts";
import { type Progress, progressLine } from "./progress.ts";

/** The key Deno's Jupyter kernel looks up to render an object. */
export const JUPYTER_DISPLAY: unique symbol = Symbol.for("Jupyter.display");

/** A MIME bundle: MIME type -> content. */
export type MimeBundle = Record<string, string>;

/** An object that renders itself in Jupyter. */
export interface Displayable {
  /** The MIME bundle Jupyter shows. */
  [JUPYTER_DISPLAY](): MimeBundle;
}

/** Sends one message on the kernel's IOPub channel (`Deno.jupyter.broadcast`). */
export type Broadcast = (msgType: string, content: Record<string, unknown>) => Promise<void>;

/** `Deno.jupyter` inside the Deno kernel, undefined elsewhere (where access throws). */
function jupyterApi(): typeof Deno.jupyter | undefined {
  try {
    return Deno.jupyter;
  } catch {
    return undefined;
  }
}

/** True inside the Deno Jupyter kernel. */
export function inJupyter(): boolean {
  return jupyterApi() !== undefined;
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
 * trial); NaN values are skipped. An empty series gives an empty frame.
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
    path = `<polyline fill="none" stroke="${
      options.stroke ?? "#4269d0"
    }" stroke-width="1.5" points="${coords.join(" ")}"/>`;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" style="vertical-align: middle"><rect width="${w}" height="${h}" fill="#f6f6f6"/>${path}</svg>`;
}

/**
 * The HTML of a progress display: title, a progress bar, trials done, valid
 * and failed counts, best GFLOP/s so far, elapsed seconds and a sparkline
 * of `history` (best so far after each update).
 */
export function progressHTML(title: string, p: Progress, history: readonly number[]): string {
  const counts = p.valid === undefined ? "" : `, valid ${p.valid}, errors ${p.errors}`;
  const best = p.bestGflops !== undefined
    ? `, best ${p.bestGflops.toFixed(2)} GFLOP/s`
    : p.valid === undefined
    ? ""
    : ", best -";
  return `<div style="font-family: sans-serif; font-size: 13px">` +
    `<b>${escapeHTML(title)}</b> ` +
    `<progress value="${p.done}" max="${p.total}" style="vertical-align: middle"></progress> ` +
    `${p.done}/${p.total} ${escapeHTML(p.unit ?? "trials")}${counts}${best}, ` +
    `${p.elapsed.toFixed(1)} s ${sparklineSVG(history)}</div>`;
}

/** Options of {@link liveProgress}. */
export interface LiveProgressOptions {
  /** Id of the display updated in place. Default: a fresh id per call. */
  displayId?: string;
  /** Least milliseconds between two updates (the last one is always sent). Default 250. */
  minIntervalMs?: number;
  /**
   * Sends IOPub messages. Default `Deno.jupyter.broadcast` inside the kernel;
   * outside it, progress lines go to stderr instead.
   */
  broadcast?: Broadcast;
}

/** An `onProgress` callback that also knows how to finish its display. */
export interface LiveProgress {
  /** Shows the progress `p` (throttled). */
  (p: Progress): void;
  /** Sends the last update if it was held back and waits until every message is out. */
  done(): Promise<void>;
  /** Best GFLOP/s so far after each update (NaN before the first valid candidate). */
  readonly history: number[];
}

let displays = 0;

/**
 * A live progress display for a tuning run: pass it as `onProgress` to
 * `runSession`, then `await progress.done()`. In Jupyter it broadcasts one
 * `display_data` and then `update_display_data` with the same display id,
 * so one output shows trials done, best so far and a sparkline of the best
 * so far. Outside Jupyter it writes {@link progressLine}s to stderr.
 */
export function liveProgress(title: string, options: LiveProgressOptions = {}): LiveProgress {
  const broadcast: Broadcast | undefined = options.broadcast ?? (() => {
    const api = jupyterApi();
    return api ? (type, content) => api.broadcast(type, content) : undefined;
  })();
  const displayId = options.displayId ?? `tunebook-progress-${Date.now()}-${++displays}`;
  const interval = options.minIntervalMs ?? 250;
  const history: number[] = [];
  let shown = false, lastSent = -Infinity;
  let pending: Progress | undefined;
  let chain: Promise<void> = Promise.resolve();
  const enc = new TextEncoder();

  const send = (p: Progress) => {
    pending = undefined;
    lastSent = performance.now();
    if (!broadcast) {
      Deno.stderr.writeSync(enc.encode(`${title} ${progressLine(p)}\n`));
      return;
    }
    const type = shown ? "update_display_data" : "display_data";
    shown = true;
    const content = {
      data: {
        "text/plain": `${title} ${progressLine(p)}`,
        "text/html": progressHTML(title, p, history),
      },
      metadata: {},
      transient: { display_id: displayId },
    };
    // Messages go out in order; a failed broadcast must not stop the tuning run.
    chain = chain.then(() => broadcast(type, content)).catch(() => {});
  };

  const update = ((p: Progress) => {
    history.push(p.bestGflops ?? NaN);
    if (p.done >= p.total || performance.now() - lastSent >= interval) send(p);
    else pending = p;
  }) as LiveProgress;
  update.done = async () => {
    if (pending) send(pending);
    await chain;
  };
  Object.defineProperty(update, "history", { value: history });
  return update;
}

/** Wraps a MIME bundle as an object Jupyter renders. */
function bundleOf(make: () => MimeBundle): Displayable {
  return { [JUPYTER_DISPLAY]: make };
}

/**
 * A trace that renders in Jupyter as schedule code ({@link printTrace}):
 * `text/plain`, and `text/html` in a `<pre>`. Takes a trace or its JSON.
 */
export function displayTrace(trace: Trace | string): Displayable & { trace: Trace } {
  const t: Trace = typeof trace === "string" ? JSON.parse(trace) : trace;
  return {
    trace: t,
    [JUPYTER_DISPLAY]: () => {
      const code = printTrace(t);
      return { "text/plain": code, "text/html": `<pre>${escapeHTML(code)}</pre>` };
    },
  };
}

/** Source code (C, CUDA, schedule code) that renders in Jupyter in a `<pre>`. */
export function displayCode(code: string): Displayable {
  return bundleOf(() => ({ "text/plain": code, "text/html": `<pre>${escapeHTML(code)}</pre>` }));
}

/** One line about a record: trial, error kind or GFLOP/s and median time. */
function recordLine(c: CandidateRow): string {
  const r = c.result;
  if (!r) return `trial ${c.trial}: not measured`;
  if (r.errorKind !== "none") {
    return `trial ${c.trial}: ${r.errorKind}${r.error ? ` (${r.error})` : ""}`;
  }
  return `trial ${c.trial}: ${r.gflops?.toFixed(2)} GFLOP/s, ${
    (r.seconds! * 1e3).toPrecision(4)
  } ms`;
}

/**
 * A record of the database (a candidate with its result) that renders in
 * Jupyter as its measurement and its schedule code.
 */
export function displayRecord(c: CandidateRow): Displayable {
  return bundleOf(() => {
    const line = recordLine(c);
    const code = printTrace(JSON.parse(c.trace));
    return {
      "text/plain": `${line}\n${code}`,
      "text/html": `<div><b>${escapeHTML(line)}</b><pre>${escapeHTML(code)}</pre></div>`,
    };
  });
}

/** An SVG (e.g. from `tuningCurveSVG` or `heatmapSVG`) that renders in Jupyter as an image. */
export function displaySVG(svg: string): Displayable {
  return bundleOf(() => ({ "image/svg+xml": svg, "text/plain": "[SVG plot]" }));
}

/** HTML (e.g. a table) that renders in Jupyter; `text` is its plain-text form. */
export function displayHTML(html: string, text = "[HTML]"): Displayable {
  return bundleOf(() => ({ "text/html": html, "text/plain": text }));
}

/** Options of {@link htmlTable}. */
export interface TableOptions {
  /** Significant digits of non-integer numbers. Default 4. */
  digits?: number;
  /** Caption above the table. */
  caption?: string;
}

function cell(v: unknown, digits: number): string {
  if (typeof v === "number") {
    return Number.isInteger(v) || !Number.isFinite(v) ? String(v) : v.toPrecision(digits);
  }
  if (v === null || v === undefined) return "-";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/**
 * A table of rows (the columns of the first row, in order) that renders in
 * Jupyter as HTML, with a Markdown-style plain-text form.
 */
export function htmlTable(
  rows: readonly object[],
  options: TableOptions = {},
): Displayable & { html: string; text: string } {
  const digits = options.digits ?? 4;
  const cols = rows.length ? Object.keys(rows[0]) : [];
  const body = rows.map((r) => cols.map((c) => cell((r as Record<string, unknown>)[c], digits)));
  const html = `<table>${
    options.caption ? `<caption>${escapeHTML(options.caption)}</caption>` : ""
  }<thead><tr>${cols.map((c) => `<th>${escapeHTML(c)}</th>`).join("")}</tr></thead><tbody>${
    body.map((r) => `<tr>${r.map((v) => `<td>${escapeHTML(v)}</td>`).join("")}</tr>`).join("")
  }</tbody></table>`;
  const text = [
    `| ${cols.join(" | ")} |`,
    `| ${cols.map(() => "---").join(" | ")} |`,
    ...body.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
  return { html, text, [JUPYTER_DISPLAY]: () => ({ "text/html": html, "text/plain": text }) };
}

/**
 * Shows an object: in Jupyter as a `display_data` output (sent while the
 * cell runs, so it is kept even when the cell's final result is not), an
 * SVG string as an image; outside Jupyter, its plain text on stdout.
 */
export async function show(x: Displayable | string): Promise<void> {
  const d = typeof x === "string" ? (x.startsWith("<svg") ? displaySVG(x) : displayHTML(x)) : x;
  const api = jupyterApi();
  if (api) await api.display(d);
  else console.log(d[JUPYTER_DISPLAY]()["text/plain"] ?? "");
}
