/**
 * Tables of a strategy study from the JSON lines of `deno task compare`
 * (one or more runs, e.g. one per group of strategies; a strategy in several
 * runs takes its row from the last): per space, each
 * strategy's mean fraction of optimum at every budget and its
 * budget-aggregated score (search/score.ts); then the ranking of all
 * strategies across spaces by mean rank of that score. Markdown on stdout.
 *
 * ```sh
 * deno task compare --space all --strategies random,sa,bo,auto --budget 25,50,100,200,400 --seeds 20 > a.json
 * deno run --allow-read bench/strategy_study.ts a.json [b.json …]
 * ```
 * @module
 */
import type { CompareManyOutput, CompareOutput } from "../search/comparison.ts";
import { rankAcrossSpaces, rankTable } from "../search/score.ts";
import { cacheName } from "../datasets/cache_names.ts";
import { positionalArgs, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints. */
const USAGE = `usage:
  deno run --allow-read bench/strategy_study.ts a.json [b.json …]`;

/** Markdown tables of compare outputs (several runs over the same spaces are merged by space). */
export function studyTables(outputs: (CompareOutput | CompareManyOutput)[]): string {
  const bySpace = new Map<string, CompareOutput[]>();
  for (const o of outputs) {
    for (const s of "spaces" in o ? o.spaces : [o]) {
      const key = cacheName(s.spec ?? s.space);
      bySpace.set(key, [...(bySpace.get(key) ?? []), s]);
    }
  }
  const parts: string[] = [];
  const scores: Record<string, Record<string, number>> = {};
  for (const [key, list] of bySpace) {
    const budgets = [...new Set(list.flatMap((o) => o.results.map((r) => r.budget)))].sort((a, b) =>
      a - b
    );
    const seeds = list[0].results[0]?.seeds ?? 0;
    parts.push(`### ${key}: ${list[0].space} (${seeds} seeds)\n`);
    parts.push(`| strategy | ${budgets.join(" | ")} | score |`);
    parts.push(`| --- | ${budgets.map(() => "---").join(" | ")} | --- |`);
    scores[key] = {};
    // A strategy in several runs: the later run's row (in the place of its first).
    const from = new Map<string, CompareOutput>();
    for (const o of list) for (const name of Object.keys(o.scores)) from.set(name, o);
    for (const [name, o] of from) {
      const score = o.scores[name];
      const cells = budgets.map((b) =>
        o.results.find((r) => r.strategy === name && r.budget === b)?.mean_fraction.toFixed(3) ??
          ""
      );
      parts.push(
        `| ${name} | ${cells.join(" | ")} | ${score === null ? "n/a" : score.toFixed(3)} |`,
      );
      if (score !== null) scores[key][name] = score;
    }
    parts.push("");
  }
  parts.push("### Ranking across spaces (score; mean rank over spaces, 1 = best)\n");
  parts.push(rankTable(rankAcrossSpaces(scores)));
  return parts.join("\n");
}

if (import.meta.main) {
  await runCommand("strategy_study", async (argv) => {
    const args = positionalArgs(argv, USAGE, 1000);
    const outputs = await Promise.all(args.map(async (f) => {
      try {
        const lines = (await Deno.readTextFile(f)).trim().split("\n");
        return JSON.parse(lines[lines.length - 1]);
      } catch (e) {
        throw new UsageError(`cannot read "${f}" as compare output: ${(e as Error).message}`);
      }
    }));
    console.log(studyTables(outputs));
  });
}
