/**
 * Jupyter helpers for notebooks on the Deno kernel: a live progress display
 * for tuning runs (one output updated in place), and objects that render
 * themselves (traces, records, SVG plots) through Deno's
 * `Symbol.for("Jupyter.display")` protocol.
 *
 * Map: {@link liveProgress} (an `onProgress` callback for `runSession`),
 * {@link displayTrace}, {@link displayRecord}, {@link displaySVG},
 * {@link displayHTML}, {@link displayCode}, {@link htmlTable}; {@link show} (displays one of them,
 * or prints its text outside Jupyter); {@link inJupyter}. The progress
 * display's pure renderers (`progressHTML`, `progressCardSVG`,
 * `sparklineSVG`) live in plots/progress_card.ts and are re-exported here.
 *
 * Figures ({@link displaySVG}, `show` of an SVG string, the final state of a
 * live progress display) go out as `figureBundle`s of plots/figure.ts: the
 * SVG with its PNG beside it, so HTML exports of the notebook show them
 * too.
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
// arquero 8 asks for @uwdata/flechette ^2; 2.7 needs a package the npm registry lacks, so the
// module graph pins 2.6.0 (no deno.json needed: this holds for an importer in any folder).
import "npm:@uwdata/flechette@2.6.0";
import { ColumnTable } from "npm:arquero@8.0.3";
import type { CandidateRow } from "../datasets/db.ts";
import { checkInteger, checkObject, checkString, described } from "../ir/check.ts";
import { printTrace, type Trace } from "../ir/trace.ts";
import { figureBundle } from "../plots/figure.ts";
import { progressCardSVG, progressHTML } from "../plots/progress_card.ts";
import { type Progress, progressLine } from "./progress.ts";

export {
  progressCardSVG,
  progressHTML,
  seriesLabel,
  type SparklineOptions,
  sparklineSVG,
} from "../plots/progress_card.ts";

/** The key Deno's Jupyter kernel looks up to render an object. */
export const JUPYTER_DISPLAY: unique symbol = Symbol.for("Jupyter.display");

/** A MIME bundle: MIME type -> content. */
export type MimeBundle = Record<string, string>;

/** An object that renders itself in Jupyter. */
export interface Displayable {
  /** The MIME bundle Jupyter shows. */
  [JUPYTER_DISPLAY](): MimeBundle;
}

/**
 * A figure that renders itself in Jupyter; its bundle (SVG, PNG, an `<img>`
 * of the PNG as HTML, text) is made when shown, as the PNG takes a render.
 */
export interface FigureDisplay {
  /** The figure as an SVG document. */
  readonly svg: string;
  /** Its text form (`text/plain`). */
  readonly text: string;
  /** The MIME bundle Jupyter shows (the kernel awaits it). */
  [JUPYTER_DISPLAY](): Promise<MimeBundle>;
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

/**
 * Lets the kernel send what was just displayed. `Deno.jupyter.display` and
 * `broadcast` (Deno 2.9) return before their message is sent, and a message
 * still queued when the cell's code ends is lost: of twelve large outputs
 * sent in six cells, three never reached nbconvert; yielding one macrotask
 * after each, none was lost in three runs of thirty.
 */
function flushIOPub(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
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
  /**
   * The sparkline's series, one value per update: the best GFLOP/s so far
   * when the progress counts measured trials (NaN before the first valid
   * one), else the seconds per unit since the previous update (e.g. per run).
   */
  readonly history: number[];
}

let displays = 0;

/**
 * A live progress display for a tuning run: pass it as `onProgress` to
 * `runSession`, then `await progress.done()`. In Jupyter it broadcasts one
 * `display_data` and then `update_display_data` with the same display id,
 * so one output shows trials done, best so far and a sparkline of the best
 * so far (or of the seconds per run, for progress that is not measurement).
 * `done()` leaves it as a figure ({@link progressCardSVG} with its PNG), so
 * the saved notebook and its HTML export show the final state.
 * Outside Jupyter it writes {@link progressLine}s to stderr.
 */
export function liveProgress(title: string, options: LiveProgressOptions = {}): LiveProgress {
  checkString(title, "title", { allowEmpty: true });
  checkObject(options, "liveProgress options");
  const broadcast: Broadcast | undefined = options.broadcast ?? (() => {
    const api = jupyterApi();
    return api
      ? async (type, content) => {
        await api.broadcast(type, content);
        await flushIOPub();
      }
      : undefined;
  })();
  const displayId = options.displayId ?? `tunebook-progress-${Date.now()}-${++displays}`;
  const interval = options.minIntervalMs ?? 250;
  const history: number[] = [];
  let shown = false, lastSent = -Infinity, final = false;
  let pending: Progress | undefined, last: Progress | undefined;
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
    if (p.valid !== undefined) history.push(p.bestGflops ?? NaN);
    else {
      const steps = p.done - (last?.done ?? 0);
      history.push(steps > 0 ? (p.elapsed - (last?.elapsed ?? 0)) / steps : NaN);
    }
    last = p;
    final = false;
    if (p.done >= p.total || performance.now() - lastSent >= interval) send(p);
    else pending = p;
  }) as LiveProgress;
  update.done = async () => {
    if (pending) send(pending);
    if (broadcast && last && !final) {
      final = true;
      const p = last, series = [...history];
      chain = chain.then(async () => {
        const svg = progressCardSVG(title, p, series);
        const data = await figureBundle(svg, { alt: `${title} ${progressLine(p)}` });
        await broadcast("update_display_data", {
          data,
          metadata: {},
          transient: { display_id: displayId },
        });
      }).catch(() => {});
    }
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
  if (typeof trace !== "string" && (typeof trace !== "object" || trace === null)) {
    throw new TypeError(`trace must be a trace or its JSON text, got ${described(trace)}`);
  }
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
  checkString(code, "code", { allowEmpty: true });
  return bundleOf(() => ({ "text/plain": code, "text/html": `<pre>${escapeHTML(code)}</pre>` }));
}

/** One line about a record: trial (from 1, as in the tables), error kind or GFLOP/s, time. */
function recordLine(c: CandidateRow): string {
  const r = c.result;
  const trial = c.trial + 1;
  if (!r) return `trial ${trial}: not measured`;
  if (r.errorKind !== "none") {
    return `trial ${trial}: ${r.errorKind}${r.error ? ` (${r.error})` : ""}`;
  }
  return `trial ${trial}: ${r.gflops?.toFixed(2)} GFLOP/s, ${(r.seconds! * 1e3).toPrecision(4)} ms`;
}

/**
 * A record of the database (a candidate with its result) that renders in
 * Jupyter as its measurement and its schedule code.
 */
export function displayRecord(c: CandidateRow): Displayable {
  if (typeof c !== "object" || c === null || typeof c.trace !== "string") {
    throw new TypeError(
      `record must be a candidate of the database (db.best(run), db.candidates(run)), got ${
        described(c)
      }`,
    );
  }
  return bundleOf(() => {
    const line = recordLine(c);
    const code = printTrace(JSON.parse(c.trace));
    return {
      "text/plain": `${line}\n${code}`,
      "text/html": `<div><b>${escapeHTML(line)}</b><pre>${escapeHTML(code)}</pre></div>`,
    };
  });
}

/**
 * An SVG (e.g. from `tuningCurveSVG` or `heatmapSVG`) that renders in
 * Jupyter as a figure: the SVG with its PNG beside it (`figureBundle` of
 * plots/figure.ts); `alt` is its text form. Default `"[SVG plot]"`.
 */
export function displaySVG(svg: string, alt = "[SVG plot]"): FigureDisplay {
  return { svg, text: alt, [JUPYTER_DISPLAY]: () => figureBundle(svg, { alt }) };
}

/** HTML (e.g. a table) that renders in Jupyter; `text` is its plain-text form. */
export function displayHTML(html: string, text = "[HTML]"): Displayable {
  return bundleOf(() => ({ "text/html": html, "text/plain": text }));
}

/** Options of {@link htmlTable}. */
export interface TableOptions {
  /** Significant digits of non-integer numbers. Default 4. */
  digits?: number;
  /** Caption above the table. Default: none. */
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
 * A table of rows (the columns of the first row, in order), or an arquero
 * table (its columns), that renders in Jupyter as HTML, with a
 * Markdown-style plain-text form.
 */
export function htmlTable(
  source: readonly object[] | ColumnTable,
  options: TableOptions = {},
): Displayable & { html: string; text: string } {
  if (!(source instanceof ColumnTable) && !Array.isArray(source)) {
    throw new TypeError(
      `source must be a list of rows or an arquero table, got ${described(source)}`,
    );
  }
  if (options.digits !== undefined) checkInteger(options.digits, "digits", { min: 1, max: 17 });
  const rows = source instanceof ColumnTable ? source.objects() : source;
  const digits = options.digits ?? 4;
  const cols = source instanceof ColumnTable
    ? source.columnNames()
    : rows.length
    ? Object.keys(rows[0])
    : [];
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
 * SVG string as a figure ({@link displaySVG}), an arquero table as
 * {@link htmlTable} shows it (4 significant digits); outside Jupyter, its
 * plain text on stdout.
 */
export async function show(x: Displayable | FigureDisplay | ColumnTable | string): Promise<void> {
  const d = typeof x === "string"
    ? (x.startsWith("<svg") ? displaySVG(x) : displayHTML(x))
    : x instanceof ColumnTable
    ? htmlTable(x)
    : x;
  if (typeof d !== "object" || d === null || typeof d[JUPYTER_DISPLAY] !== "function") {
    throw new TypeError(
      `x must be a display (displayRecord, displayCode, htmlTable, displaySVG), an arquero table ` +
        `or a string, got ${described(x)}`,
    );
  }
  const api = jupyterApi();
  if (api) {
    await api.display(d);
    await flushIOPub();
  } else if ("svg" in d) console.log(d.text);
  else console.log(d[JUPYTER_DISPLAY]()["text/plain"] ?? "");
}
