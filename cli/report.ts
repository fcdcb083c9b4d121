/**
 * `deno task report --db runs.db --out report/`: a static, offline HTML
 * page (`index.html`: inline SVG and CSS, no script, no external URL) of the
 * runs of a records database: a table of the runs (strategy, seed,
 * workload, machine, compiler, tunebook version, counts, best GFLOP/s), and
 * for each run its tuning curve and its best schedule printed as code. The
 * runs of a comparison (`compare --db`) get one page per space instead
 * (cli/compare_report.ts): fraction of the optimum against evaluations with
 * quartile bands per strategy, the score and reach tables, and on a live
 * space GFLOP/s. Trials are numbered from 1, as in every tunebook output.
 * A run whose best and runner-up are within their measured noise, or whose
 * best was measured under a load above the run machine's cores
 * (tuner/ranking_noise.ts), gets a warning line in its section and on stdout.
 * A live comparison's space gets the same check of its two fastest
 * strategies' final bests. Ends with one line of JSON on stdout: `{"out",
 * "db", "runs", "spaces", "uncertain"}` (and `"uncertainSpaces"` when a space
 * is uncertain), listing those runs (spaces) with the decision's figures.
 *
 * Options: `--runs 1,3` (only these runs), `--title TEXT`.
 * @module
 */
import { basename, dirname, join } from "node:path";
import type { RunRow } from "../datasets/db.ts";
import { isPostgresUrl } from "../datasets/postgres_url.ts";
import { openRecordsReader, type RecordsReader } from "../datasets/records_reader.ts";
import { printTrace } from "../ir/trace.ts";
import { confirmationIn, confirmedRunOf } from "../tuner/confirm.ts";
import { bestSoFar, tuningCurveSVG } from "../plots/tuning_curve.ts";
import { parseFlags, runJsonCommand, UsageError } from "./args.ts";
import { checkOutputDir, printResult } from "./output.ts";
import { type RankingNoise, rankingOfResults } from "../tuner/ranking_noise.ts";
import {
  comparisonSection,
  comparisonsOf,
  spaceAnchor,
  type SpaceComparison,
} from "./compare_report.ts";

/** Usage text of `report`. */
export const REPORT_USAGE = `usage: deno task report --db PATH [--out DIR] [options]

  --db PATH        records database to read (must exist; opened read-only)
  --out DIR        directory to write index.html into (default: beside --db, e.g.
                   runs/F_report for runs/F.db, or runs/report for a PostgreSQL database;
                   created if missing; an existing file there is refused)
  --runs ID,ID     only these runs (default: all)
  --title TEXT     page title (default "tunebook report")
  --quiet          only the JSON line (not the path of the page before it)
  --help           this text`;

/** What the report shows of one run. */
export interface RunSummary {
  id: number;
  status: string;
  created: string;
  strategy: string;
  seed: number;
  /** `name:shape`, e.g. `matmul:32,32,32`. */
  workload: string;
  target: string;
  /** CPU, cores and OS, from the run's machine description. */
  machine: string;
  compiler: string;
  version: string;
  trials: number;
  measured: number;
  valid: number;
  errors: number;
  /** Best GFLOP/s: the confirmed figure when the run's finalists were timed again. */
  bestGflops: number | null;
  /**
   * With finalists timed again (tuner/confirm.ts): the best's figure as the
   * search recorded it, the rounds, and the finalists run.
   */
  confirmed?: { firstGflops: number | null; rounds: number; runId: number };
  /** Best GFLOP/s so far after each trial (NaN before the first valid one). */
  curve: number[];
  /** The best candidate's trace printed as schedule code. */
  bestSchedule?: string;
  /** Trial of the best candidate, numbered from 1. */
  bestTrial?: number;
  /** Whether best and runner-up are within the noise (null: no valid candidate). */
  ranking: RankingNoise | null;
}

function machineLine(m: Record<string, unknown>): string {
  const parts = [
    m.cpu,
    m.cores === undefined ? undefined : `${m.cores} cores`,
    m.os,
    m.arch,
  ].filter((x) => x !== undefined && x !== null && x !== "");
  return parts.length ? parts.join(", ") : Object.keys(m).length ? JSON.stringify(m) : "-";
}

/**
 * Summaries of runs of a database (all of them, or those of `ids`), oldest
 * first. A run of finalists that confirms a tuning run is shown in that
 * run's row (its best, confirmed, and the first figure), not as a row of its
 * own unless `ids` names it.
 */
export function summarizeRuns(db: RecordsReader, ids?: readonly number[]): RunSummary[] {
  let runs: RunRow[] = db.runs();
  if (ids) {
    const missing = ids.filter((id) => !runs.some((r) => r.id === id));
    if (missing.length) {
      throw new UsageError(`No run ${missing.join(", ")} in records database "${db.path}"`);
    }
    runs = runs.filter((r) => ids.includes(r.id));
  } else {
    const present = new Set(runs.map((r) => r.id));
    runs = runs.filter((r) => !present.has(confirmedRunOf(r) ?? 0));
  }
  return runs.map((run) => {
    const w = db.workload(run.workloadId);
    const counts = db.counts(run.id);
    const confirmation = confirmationIn(db, run.id);
    const flops = w?.flops ?? 0;
    const gflops = (x: number | null | undefined) => x && flops > 0 ? flops / x / 1e9 : null;
    const searched = db.best(run.id);
    const candidates = db.candidates(run.id);
    const id = confirmation?.best?.candidateId;
    const best = id == null
      ? searched
      : candidates.find((c) => c.id === id) as typeof searched ?? searched;
    const curve = bestSoFar(candidates.map((c) => c.result?.gflops ?? NaN));
    // The load is compared with the cores of the machine that measured, when it says.
    const cores = Number(run.machine.cores);
    // With finalists, best and runner-up are judged by their re-timed rounds (the finalists run).
    const ranking = rankingOfResults(
      (confirmation ? db.candidates(confirmation.runId) : candidates).flatMap((c) =>
        c.result ?? []
      ),
      Number.isInteger(cores) && cores > 0 ? { cores } : {},
    );
    let bestSchedule: string | undefined;
    if (best) {
      try {
        bestSchedule = printTrace(JSON.parse(best.trace));
      } catch {
        bestSchedule = best.trace;
      }
    }
    return {
      id: run.id,
      status: run.status,
      created: run.created,
      strategy: run.strategy,
      seed: run.seed,
      workload: w?.key ?? `workload ${run.workloadId}`,
      target: run.target,
      machine: machineLine(run.machine),
      compiler: run.compiler,
      version: run.tunebookVersion,
      trials: run.trials,
      ...counts,
      bestGflops: confirmation?.best
        ? gflops(confirmation.best.seconds)
        : best?.result.gflops ?? null,
      ...(confirmation?.best
        ? {
          confirmed: {
            firstGflops: gflops(confirmation.best.firstSeconds),
            rounds: confirmation.rounds,
            runId: confirmation.runId,
          },
        }
        : {}),
      curve,
      ...(bestSchedule === undefined ? {} : { bestSchedule, bestTrial: best!.trial + 1 }),
      ranking,
    };
  });
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(
    /"/g,
    "&quot;",
  );
}

/** An SVG for inline use in HTML: namespace declarations (URLs, never fetched) dropped. */
function inlineSVG(svg: string): string {
  return svg.replace(/\s+xmlns(:\w+)?="[^"]*"/g, "");
}

const STYLE = `body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1100px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f6f6f6; padding: 8px; overflow-x: auto; font-size: 12px; }
section { margin-top: 2.5em; border-top: 1px solid #ddd; }
section.space { break-before: page; }
.meta { font-size: 13px; color: #555; }
.warning { font-size: 13px; color: #8a4b00; }`;

/** The report page of some runs. */
export function reportHTML(
  runs: readonly RunSummary[],
  o: { title: string; db: string; generated?: string; comparisons?: readonly SpaceComparison[] },
): string {
  const comparisons = o.comparisons ?? [];
  const compared = comparisons.flatMap((c) => c.strategies.flatMap((s) => s.ids)).length;
  const toc = comparisons.length === 0
    ? ""
    : `<h2>Comparisons</h2>\n<ul>\n${
      comparisons.map((c) =>
        `<li><a href="#${spaceAnchor(c.spec)}">${esc(c.spec)}</a>: ${
          c.strategies.map((s) => esc(s.name)).join(", ")
        }, ${Math.max(...c.strategies.map((s) => s.runs.length))} seeds</li>`
      ).join("\n")
    }\n</ul>`;
  const num = (v: number | null, digits = 2) =>
    `<td class="num">${v === null ? "-" : v.toFixed(digits)}</td>`;
  const rows = runs.map((r) =>
    `<tr><td><a href="#run-${r.id}">${r.id}</a></td><td>${
      esc(r.strategy)
    }</td><td class="num">${r.seed}</td>` +
    `<td>${esc(r.workload)}</td><td>${esc(r.target)}</td><td>${esc(r.machine)}</td>` +
    `<td>${esc(r.compiler)}</td><td>${esc(r.version)}</td><td>${esc(r.status)}</td>` +
    `<td class="num">${r.trials}</td><td class="num">${r.measured}</td><td class="num">${r.valid}</td>` +
    `<td class="num">${r.errors}</td>${num(r.confirmed ? r.confirmed.firstGflops : null)}${
      num(r.bestGflops)
    }</tr>`
  ).join("\n");
  const sections = runs.map((r) => {
    const curve = r.curve.some((v) => !Number.isNaN(v))
      ? inlineSVG(tuningCurveSVG([{ label: `run ${r.id} (${r.strategy})`, values: r.curve }], {
        title: `Run ${r.id}: ${r.workload}, ${r.strategy}, seed ${r.seed}`,
      }))
      : "<p>No valid measurement: no tuning curve.</p>";
    const best = r.bestSchedule === undefined
      ? "<p>No valid candidate.</p>"
      : `<h3>Best schedule (trial ${r.bestTrial}, ${r.bestGflops?.toFixed(2)} GFLOP/s${
        r.confirmed
          ? ` confirmed over ${r.confirmed.rounds} rounds in run ${r.confirmed.runId}, first ${
            r.confirmed.firstGflops?.toFixed(2) ?? "-"
          }`
          : ""
      })</h3>\n<pre>${esc(r.bestSchedule)}</pre>`;
    return `<section id="run-${r.id}">\n<h2>Run ${r.id}: ${esc(r.workload)} with ${
      esc(r.strategy)
    }</h2>\n<p class="meta">started ${esc(r.created)}; ${esc(r.machine)}; ${esc(r.compiler)}; ` +
      `tunebook ${esc(r.version)}</p>\n${
        r.ranking?.warning ? `<p class="warning">${esc(r.ranking.warning)}</p>\n` : ""
      }${curve}\n${best}\n</section>`;
  }).join("\n");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(o.title)}</title>
<style>
${STYLE}
</style>
</head>
<body>
<h1>${esc(o.title)}</h1>
<p class="meta">${runs.length + compared} run${runs.length + compared === 1 ? "" : "s"} of <code>${
    esc(o.db)
  }</code>${o.generated ? `, generated ${esc(o.generated)}` : ""}${
    compared ? `; ${compared} of them in ${comparisons.length} comparison(s)` : ""
  }.</p>
${toc}
${comparisons.map(comparisonSection).join("\n")}
${
    runs.length === 0 ? "" : `<h2>Runs</h2>
<table>
<thead><tr><th>run</th><th>strategy</th><th>seed</th><th>workload</th><th>target</th><th>machine</th><th>compiler</th><th>version</th><th>status</th><th>trials</th><th>measured</th><th>valid</th><th>errors</th><th>first GFLOP/s</th><th>best GFLOP/s</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
  }
${sections}
</body>
</html>
`;
}

function runIds(text: string): number[] {
  const parts = text.split(",").map((s) => s.trim());
  if (parts.some((p) => !/^\d+$/.test(p) || Number(p) < 1)) {
    throw new UsageError(`--runs must be run ids separated by commas, got "${text}"`);
  }
  return parts.map(Number);
}

/** Writes the report; returns the JSON summary. */
export async function report(
  argv: string[],
): Promise<
  {
    out: string;
    db: string;
    runs: number;
    spaces: number;
    uncertain: (RankingNoise & { run: number })[];
    uncertainSpaces?: (RankingNoise & { space: string })[];
  }
> {
  const v = parseFlags(
    argv,
    {
      db: { type: "string" },
      out: { type: "string" },
      runs: { type: "string" },
      title: { type: "string", default: "tunebook report" },
      quiet: { type: "boolean", default: false },
    },
    REPORT_USAGE,
  );
  if (!v.db) throw new UsageError("Missing --db (a records database)");
  try {
    if (!isPostgresUrl(v.db) && !(await Deno.stat(v.db)).isFile) {
      throw new UsageError(`--db ${v.db} is not a file`);
    }
  } catch (e) {
    if (e instanceof UsageError || e instanceof Deno.errors.NotCapable) throw e;
    throw new UsageError(`--db ${v.db}: no such records database`);
  }
  const ids = v.runs === undefined ? undefined : runIds(v.runs);
  // Beside the database, never into the current folder unasked.
  const outDir = v.out ??
    (isPostgresUrl(v.db)
      ? join("runs", "report")
      : join(dirname(v.db), `${basename(v.db).replace(/\.[^.]*$/, "")}_report`));
  checkOutputDir(outDir, ["index.html"], { flag: "--out", db: v.db });
  const db = await openRecordsReader(v.db);
  let runs: RunSummary[];
  let comparisons: SpaceComparison[];
  try {
    runs = summarizeRuns(db, ids);
    // The runs of a comparison are shown by space; --runs picks among the others.
    comparisons = ids === undefined ? await comparisonsOf(db) : [];
  } finally {
    db.close();
  }
  const inComparison = new Set(comparisons.flatMap((c) => c.strategies.flatMap((s) => s.ids)));
  runs = runs.filter((r) => !inComparison.has(r.id));
  const html = reportHTML(runs, {
    title: v.title!,
    db: v.db,
    generated: new Date().toISOString(),
    comparisons,
  });
  await Deno.mkdir(outDir, { recursive: true });
  const out = join(outDir, "index.html");
  await Deno.writeTextFile(out, html);
  const total = runs.length + inComparison.size;
  const uncertain = runs.flatMap((r) => r.ranking?.uncertain ? [{ run: r.id, ...r.ranking }] : []);
  const uncertainSpaces = comparisons.flatMap((c) =>
    c.ranking?.uncertain ? [{ space: c.spec, ...c.ranking }] : []
  );
  if (!v.quiet) {
    for (const u of uncertain) printResult(`run ${u.run}: ${u.warning}`);
    for (const u of uncertainSpaces) printResult(`space ${u.space}: ${u.warning}`);
  }
  if (!v.quiet) {
    printResult(
      `report of ${total} run(s)${
        comparisons.length ? `, ${comparisons.length} compared space(s)` : ""
      }: ${out}`,
    );
  }
  return {
    out,
    db: v.db,
    runs: total,
    spaces: comparisons.length,
    uncertain,
    ...(uncertainSpaces.length ? { uncertainSpaces } : {}),
  };
}

if (import.meta.main) await runJsonCommand("report", report);
