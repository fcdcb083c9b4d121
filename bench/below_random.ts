/**
 * Cells of a strategy study below random search: for every replayed space of
 * `deno task compare` outputs, each strategy's mean fraction of optimum at
 * each budget against the exact expectation of random search on that cache
 * (search/score.ts, `expectedRandomFraction`), not the sampled `random` row.
 * Prints one line per cell below the expectation by more than `--margin`
 * (default 0), then the count per strategy. A strategy in several files takes
 * its rows from the last ({@link latestRows}).
 *
 * ```sh
 * deno run --allow-read bench/below_random.ts a.json [b.json …] [--margin 0.01]
 * ```
 * @module
 */
import { replaySpaceFromFile } from "../search/replay.ts";
import { expectedRandomFraction } from "../search/score.ts";
import { parseCommandLine, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run --allow-read bench/below_random.ts a.json [b.json …] [--margin 0.01]`;

/** The part of one space's `compare` JSON read here (bench/ sits below cli/ in the layers). */
export interface SpaceOutput {
  spec: string;
  results: { strategy: string; budget: number; mean_fraction: number }[];
}

/**
 * One entry per space (in order of first appearance) whose rows are, for each strategy, those of
 * the last run that has it: a rerun of some strategies replaces their rows in an earlier study.
 *
 * @example
 * ```ts
 * import { latestRows } from "./below_random.ts";
 * const row = (strategy: string, f: number) => ({ strategy, budget: 25, mean_fraction: f });
 * const [s] = latestRows([
 *   { spec: "a", results: [row("bo", 0.1), row("sa", 0.2)] },
 *   { spec: "a", results: [row("bo", 0.9)] },
 * ]);
 * if (s.results.map((r) => r.mean_fraction).join() !== "0.9,0.2") throw new Error();
 * ```
 */
export function latestRows(runs: readonly SpaceOutput[]): SpaceOutput[] {
  const bySpec = new Map<string, Map<string, SpaceOutput["results"]>>();
  for (const s of runs) {
    const m = bySpec.get(s.spec) ?? new Map<string, SpaceOutput["results"]>();
    bySpec.set(s.spec, m);
    const own = new Map<string, SpaceOutput["results"]>();
    for (const r of s.results) own.set(r.strategy, [...(own.get(r.strategy) ?? []), r]);
    for (const [name, rows] of own) m.set(name, rows);
  }
  return [...bySpec].map(([spec, m]) => ({ spec, results: [...m.values()].flat() }));
}

/** Exact expected fraction of optimum of random search at each budget, on a replayed cache. */
export async function exactRandom(spec: string, budgets: number[]): Promise<Map<number, number>> {
  const r = await replaySpaceFromFile(spec, { absent: "invalid" });
  const times: number[] = [];
  for (let i = 0; i < r.space.size; i++) {
    const s = r.evaluateIndex(i).seconds;
    if (s !== undefined && r.space.isValid(r.space.point(i))) times.push(s);
  }
  return new Map(budgets.map((b) => [b, expectedRandomFraction(times, r.allowedCount, b)]));
}

if (import.meta.main) {
  await runCommand("below_random", async (argv) => {
    const parsed = parseCommandLine(argv, { margin: { type: "string", default: "0" } }, USAGE);
    const margin = Number(parsed.values.margin);
    const files = parsed.positionals;
    if (files.length === 0 || !Number.isFinite(margin)) {
      throw new UsageError(
        "give one or more compare outputs (a.json [b.json …]) and a finite --margin",
      );
    }
    const runs: SpaceOutput[] = [];
    for (const f of files) {
      let o: SpaceOutput | { spaces: SpaceOutput[] };
      try {
        const lines = (await Deno.readTextFile(f)).trim().split("\n");
        o = JSON.parse(lines[lines.length - 1]);
      } catch (e) {
        throw new UsageError(`cannot read "${f}" as compare output: ${(e as Error).message}`);
      }
      const spaces = "spaces" in o ? o.spaces : [o];
      if (!Array.isArray(spaces) || spaces.some((x) => !Array.isArray(x?.results))) {
        throw new UsageError(`"${f}" is not compare output (its last line has no results)`);
      }
      runs.push(...spaces);
    }
    const count = new Map<string, number>();
    for (const s of latestRows(runs)) {
      const budgets = [...new Set(s.results.map((r) => r.budget))];
      const rnd = await exactRandom(s.spec, budgets);
      for (const r of s.results) {
        count.set(r.strategy, count.get(r.strategy) ?? 0);
        const d = r.mean_fraction - rnd.get(r.budget)!;
        if (d < -margin) {
          count.set(r.strategy, count.get(r.strategy)! + 1);
          console.log(
            `${s.spec} ${r.strategy} at ${r.budget}: ${r.mean_fraction.toFixed(3)} < ${
              rnd.get(r.budget)!.toFixed(3)
            } (${d.toFixed(3)})`,
          );
        }
      }
    }
    console.log(
      "cells below random: " + [...count].map(([n, c]) => `${n} ${c}`).join(", "),
    );
  });
}
