/**
 * The comparison part of `report --db`: the runs `compare --db` recorded
 * (their config names the space, `config.compare`) are grouped by space, and
 * each space gets one page: the fraction of the optimum against evaluations
 * (median line, quartile band per strategy), the fraction table at the
 * budgets, the budget-aggregated scores (search/score.ts), the samples each
 * strategy needed to reach 95% of the optimum (search/compare.ts), and on a
 * live space (a workload measured on this CPU) the best GFLOP/s against
 * evaluations.
 * @module
 */
import type { RunRow } from "../datasets/db.ts";
import type { RecordsReader } from "../datasets/records_reader.ts";
import {
  type CompareRow,
  compareRows,
  compareTable,
  fractionBand,
  type ReachRow,
  reachRows,
  reachTable,
  type RunTrace,
} from "../search/comparison.ts";
import { budgetScore, meanCurve } from "../search/score.ts";
import { expectedRandomCurve, replaySpaceFromFile } from "../search/replay.ts";
import { DEFAULTS } from "../ir/defaults.ts";
import { bandCurveSVG } from "../plots/tuning_curve.ts";
import { type RankedResult, rankingOfStrategies } from "../tuner/ranking_noise.ts";

/** One space of a comparison, as the report shows it. */
export interface SpaceComparison {
  /** The `--space` the comparison was given, e.g. `gemm_RTX_3090` or `matmul:64,64,64`. */
  spec: string;
  /** True for a workload measured live (GFLOP/s shown); false for a recorded cache. */
  live: boolean;
  /** Best seconds: the cache's optimum, or the best measured in the runs. */
  optimum: number;
  /** Where {@link optimum} comes from. */
  optimumFrom: "cache" | "best measured";
  /** Flops of the workload (0 for a cache, whose kernel's flops are not recorded). */
  flops: number;
  /** Evaluations each run was given. */
  maxBudget: number;
  /** Budgets of the table: compare's defaults up to {@link maxBudget}, and it. */
  budgets: number[];
  /** Strategies in the order they were run; their runs (one per seed) and their run ids. */
  strategies: { name: string; runs: RunTrace[]; ids: number[] }[];
  rows: CompareRow[];
  reach: ReachRow[];
  /** Budget-aggregated score per strategy; null when there is no random reference. */
  scores: Record<string, number | null>;
  /** How the score's random reference was obtained. */
  randomFrom: "exact expectation" | "random runs" | "none";
  /** Random search's expected fraction of the optimum after 1..maxBudget evaluations (a cache). */
  randomCurve?: number[];
  /**
   * A live space: whether the two fastest strategies' final bests are within
   * their measured noise (tuner/ranking_noise.ts; cores of the measuring machine).
   */
  ranking?: ReturnType<typeof rankingOfStrategies>;
}

/** A run's best seconds after each evaluation (one per measured candidate, in trial order). */
function traceOf(db: RecordsReader, run: RunRow): RunTrace {
  const created = Date.parse(run.created);
  const best: number[] = [], wall: number[] = [];
  let current = Infinity;
  for (const c of db.candidates(run.id)) {
    const r = c.result;
    if (!r) continue;
    if (r.errorKind === "none" && r.seconds !== null && r.seconds < current) current = r.seconds;
    best.push(current);
    wall.push(Math.max(0, (Date.parse(r.timestamp) - created) / 1000));
  }
  return { best, wall, evals: best.length };
}

/** The recorded cache of `spec` (its optimum and exact random curve), when it can be opened. */
async function cacheOf(spec: string, absent: "invalid" | "restricted") {
  try {
    return await replaySpaceFromFile(spec, { absent });
  } catch {
    return undefined;
  }
}

/**
 * The comparisons recorded in a database, one per space, in the order their
 * first run was recorded. Of several runs of one strategy and seed, the last
 * is taken. Runs that `compare` did not write are left out.
 *
 * @example
 * ```ts
 * import { comparisonsOf } from "./compare_report.ts";
 * import { createMemoryRecordStore } from "../datasets/memory_store.ts";
 * import { snapshotOf } from "../datasets/records_reader.ts";
 * const reader = await snapshotOf(createMemoryRecordStore());
 * if ((await comparisonsOf(reader)).length !== 0) throw new Error();
 * ```
 */
export async function comparisonsOf(db: RecordsReader): Promise<SpaceComparison[]> {
  const bySpace = new Map<string, RunRow[]>();
  for (const run of db.runs()) {
    const spec = run.config?.compare;
    if (typeof spec !== "string") continue;
    bySpace.set(spec, [...(bySpace.get(spec) ?? []), run]);
  }
  const out: SpaceComparison[] = [];
  for (const [spec, all] of bySpace) {
    const last = new Map<string, RunRow>();
    for (const r of all) last.set(`${r.strategy}\u0000${r.seed}`, r);
    const runs = [...last.values()].sort((a, b) => a.seed - b.seed);
    const names = [...new Set(all.map((r) => r.strategy))];
    const strategies = names.map((name) => {
      const mine = runs.filter((r) => r.strategy === name);
      return { name, runs: mine.map((r) => traceOf(db, r)), ids: mine.map((r) => r.id) };
    });
    const maxBudget = Math.max(
      ...runs.map((r) => Number(r.config.budget) || r.trials),
      ...strategies.flatMap((s) => s.runs.map((t) => t.evals)),
    );
    const live = spec.includes(":");
    const absent = all[0].config.absent === "restricted" ? "restricted" : "invalid";
    const cache = live ? undefined : await cacheOf(spec, absent);
    const measured = Math.min(
      ...strategies.flatMap((s) => s.runs.map((t) => t.best.at(-1) ?? Infinity)),
    );
    const optimum = cache?.optimum ?? measured;
    const budgets = [...new Set([...DEFAULTS.compare.budgets, maxBudget])]
      .filter((b) => b <= maxBudget).sort((a, b) => a - b);
    const traces = new Map(strategies.map((s) => [s.name, s.runs]));
    const lo = budgets[0];
    let random: number[] | undefined, randomCurve: number[] | undefined;
    let randomFrom: SpaceComparison["randomFrom"] = "none";
    if (cache) {
      randomCurve = expectedRandomCurve(cache, 1, maxBudget);
      random = randomCurve.slice(lo - 1);
      randomFrom = "exact expectation";
    } else if (traces.has("random")) {
      random = meanCurve(traces.get("random")!, optimum, lo, maxBudget);
      randomFrom = "random runs";
    }
    const scores: Record<string, number | null> = {};
    for (const [name, rs] of traces) {
      scores[name] = random ? budgetScore(meanCurve(rs, optimum, lo, maxBudget), random) : null;
    }
    const workload = db.workload(all[0].workloadId);
    let ranking: SpaceComparison["ranking"];
    if (live) {
      const finals = new Map<string, RankedResult | undefined>();
      for (const s of strategies) {
        for (const id of s.ids) {
          const b = db.best(id)?.result;
          if (!b || b.seconds === null) continue;
          if ((finals.get(s.name)?.seconds ?? Infinity) <= b.seconds) continue;
          finals.set(s.name, { seconds: b.seconds, times: b.times, conditions: b.conditions });
        }
      }
      const cores = Number(all[0].machine.cores);
      ranking = rankingOfStrategies(finals, Number.isInteger(cores) && cores > 0 ? { cores } : {});
    }
    out.push({
      spec,
      live,
      optimum,
      optimumFrom: cache ? "cache" : "best measured",
      flops: workload?.flops ?? 0,
      maxBudget,
      budgets,
      strategies,
      rows: compareRows(traces, budgets, optimum),
      reach: reachRows(traces, optimum, 0.95),
      scores,
      randomFrom,
      ...(randomCurve ? { randomCurve } : {}),
      ...(ranking !== undefined ? { ranking } : {}),
    });
  }
  return out;
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(
    /"/g,
    "&quot;",
  );
}

/** A markdown table (search/compare.ts's tables) as an HTML table; numbers right-aligned. */
export function markdownTableHTML(markdown: string): string {
  const lines = markdown.trim().split("\n").filter((l) => !/^\|\s*---/.test(l));
  const cells = (l: string) =>
    l.replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
  const [head, ...body] = lines;
  const td = (c: string) =>
    /^-?[\d.]+(e-?\d+)?$/.test(c) || /^\d+\/\d+$/.test(c)
      ? `<td class="num">${esc(c)}</td>`
      : `<td>${esc(c)}</td>`;
  return `<table>\n<thead><tr>${
    cells(head).map((c) => `<th>${esc(c)}</th>`).join("")
  }</tr></thead>\n` +
    `<tbody>\n${
      body.map((l) => `<tr>${cells(l).map(td).join("")}</tr>`).join("\n")
    }\n</tbody>\n</table>`;
}

/** An SVG for inline use in HTML: namespace declarations (URLs, never fetched) dropped. */
function inlineSVG(svg: string): string {
  return svg.replace(/\s+xmlns(:\w+)?="[^"]*"/g, "");
}

/** The anchor of a space's page in the report. */
export function spaceAnchor(spec: string): string {
  return `space-${spec.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/** The HTML page (a `<section>`) of one space of a comparison. */
export function comparisonSection(c: SpaceComparison): string {
  const seeds = Math.max(...c.strategies.map((s) => s.runs.length));
  const evaluations = Array.from({ length: c.maxBudget }, (_, i) => i + 1);
  const series = c.strategies.map((s) => ({
    label: s.name,
    ...fractionBand(s.runs, c.optimum, evaluations),
  }));
  const fraction = inlineSVG(bandCurveSVG(series, {
    title: `${c.spec}: fraction of the optimum, median and quartiles over ${seeds} seeds`,
    width: 900,
    height: 420,
    ...(c.randomCurve
      ? { baseline: { label: "random search (expected)", x: evaluations, y: c.randomCurve } }
      : {}),
  }));
  let gflops = "";
  if (c.live && c.flops > 0 && Number.isFinite(c.optimum)) {
    const scale = c.flops / 1e9 / c.optimum;
    const g = series.map((s) => ({
      label: s.label,
      x: s.x,
      median: s.median.map((v) => v * scale),
      p25: s.p25.map((v) => v * scale),
      p75: s.p75.map((v) => v * scale),
    }));
    gflops = `<h3>Best GFLOP/s so far</h3>\n` + inlineSVG(bandCurveSVG(g, {
      title: `${c.spec}: best GFLOP/s so far, median and quartiles over ${seeds} seeds`,
      y: "best GFLOP/s so far",
      width: 900,
      height: 420,
    }));
  }
  const scoreRows = c.strategies.map((s) => {
    const x = c.scores[s.name];
    return `<tr><td>${esc(s.name)}</td><td class="num">${
      x === null ? "n/a" : x.toFixed(3)
    }</td></tr>`;
  }).join("\n");
  const optimum = Number.isFinite(c.optimum)
    ? `${(c.optimum * 1e3).toPrecision(4)} ms${
      c.live && c.flops > 0 ? ` (${(c.flops / 1e9 / c.optimum).toFixed(2)} GFLOP/s)` : ""
    }, ${c.optimumFrom === "cache" ? "the cache's best" : "the best measured in these runs"}`
    : "none (no valid measurement)";
  const runList = c.strategies.map((s) =>
    `${esc(s.name)}: ${s.ids.map((id) => `run ${id}`).join(", ")}`
  ).join("; ");
  return `<section class="space" id="${spaceAnchor(c.spec)}">
<h2>${esc(c.spec)}: ${c.strategies.map((s) => esc(s.name)).join(", ")}</h2>
<p class="meta">${c.live ? "measured live on this CPU" : "replayed from a recorded cache"}; ` +
    `${seeds} seeds, ${c.maxBudget} evaluations per run; optimum ${optimum}.</p>
${c.ranking?.warning ? `<p class="warning">${esc(c.ranking.warning)}</p>\n` : ""}${fraction}
${gflops}
<h3>Fraction of the optimum at each budget</h3>
${markdownTableHTML(compareTable(c.rows))}
<h3>Budget needed: evaluations to reach 95% of the optimum (within ${c.maxBudget})</h3>
${markdownTableHTML(reachTable(c.reach))}
<h3>Budget-aggregated score</h3>
<p class="meta">Area under the mean fraction curve over budgets ${c.budgets[0]}..${c.maxBudget}; ` +
    `0 = random search (${c.randomFrom}), 1 = the optimum at once.</p>
<table>
<thead><tr><th>strategy</th><th>score</th></tr></thead>
<tbody>
${scoreRows}
</tbody>
</table>
<p class="meta">Runs: ${runList}.</p>
</section>`;
}
