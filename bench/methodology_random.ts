/**
 * Random search under the methodology score, set by set: how far one set of
 * 25 repeats (the reference's unit) moves a space's score, and where the
 * reference's figures fall in that spread. `shared/guide/methodology.md`
 * ends with the methodology package's and Kernel Tuner's scores of
 * `random_sample` on four hub spaces, two independent sets of 25 repeats
 * each; this runs our `random` (the whole range) and `random@kt` (Kernel
 * Tuner's random_sample: a tenth of the space, then nothing) in `--sets`
 * sets of `--repeats` seeds each (seeds 0, 1, ... never reused), on the
 * methodology's budget (`--budget-time auto`) with Kernel Tuner's semantics
 * for restricted configurations (never evaluated), and prints per space and
 * variant the mean and standard deviation of the set scores, the reference's
 * two figures in standard deviations from our mean (z), and the score of the
 * first 100 seeds' runs pooled into one curve (the reference's longest set).
 *
 * ```sh
 * deno run --allow-read --allow-env --allow-sys --allow-write=bench/results bench/methodology_random.ts \
 *   [--sets 40] [--repeats 25] [--md bench/results/methodology_random.md]
 * ```
 * @module
 */
import { type ReplaySpace, replaySpaceFromFile } from "../search/replay.ts";
import { createStrategy } from "../tuner/strategies.ts";
import { readPreset } from "../tuner/presets.ts";
import { runStrategy } from "../tuner/run_strategy.ts";
import { createMemoryRecordStore } from "../datasets/memory_store.ts";
import { replayMeasurer } from "../measure/replay.ts";
import {
  budgetedRun,
  methodologyRanking,
  runIdsOf,
  timeResults,
  type TimeSpace,
  timeSpace,
} from "../tuner/compare_time.ts";
import type { RunTrace } from "../search/comparison.ts";
import { parseFlags, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run --allow-read --allow-env --allow-sys --allow-write=bench/results bench/methodology_random.ts \\
    [--sets 40] [--repeats 25] [--md bench/results/methodology_random.md]`;

/** The reference's random_sample scores (methodology.md, "Reference values"): two sets of 25 repeats. */
export const REFERENCE_RANDOM: Readonly<Record<string, readonly [number, number]>> = {
  convolution_A100: [-0.110, -0.148],
  convolution_A4000: [0.094, 0.099],
  convolution_MI250X: [0.022, 0.155],
  dedispersion_A100: [-0.023, -0.023],
  aggregate: [-0.004, 0.021],
};

/** Mean and sample standard deviation of set scores, and each reference figure's distance in those deviations. */
export interface SetSpread {
  mean: number;
  sd: number;
  /** (reference − mean) / sd, one per reference figure. */
  z: number[];
}

/**
 * The spread of set scores and where reference figures fall in it.
 *
 * @example
 * ```ts
 * import { setSpread } from "./methodology_random.ts";
 * const s = setSpread([0, 0.2, 0.4], [0.4]);
 * if (Math.abs(s.mean - 0.2) > 1e-12 || Math.abs(s.sd - 0.2) > 1e-12 || Math.abs(s.z[0] - 1) > 1e-12) {
 *   throw new Error();
 * }
 * ```
 * @throws {RangeError} with fewer than two scores
 */
export function setSpread(scores: readonly number[], reference: readonly number[]): SetSpread {
  if (scores.length < 2) {
    throw new RangeError(`setSpread needs two scores or more, got ${scores.length}`);
  }
  const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
  const sd = Math.sqrt(scores.reduce((a, b) => a + (b - mean) ** 2, 0) / (scores.length - 1));
  return { mean, sd, z: reference.map((r) => (r - mean) / sd) };
}

interface Variant {
  name: string;
  hyper: Record<string, number | string>;
}

const opened = new Map<string, Promise<{ r: ReplaySpace; ts: TimeSpace }>>();

function open(space: string): Promise<{ r: ReplaySpace; ts: TimeSpace }> {
  if (!opened.has(space)) {
    opened.set(
      space,
      replaySpaceFromFile(space, { absent: "restricted" }).then((r) => ({
        r,
        ts: timeSpace(r, { budgets: "auto" }),
      })),
    );
  }
  return opened.get(space)!;
}

async function runs(
  space: string,
  v: Variant,
  seeds: readonly number[],
): Promise<{ curve: number[]; score: number }> {
  const { r, ts } = await open(space);
  const store = createMemoryRecordStore();
  const config = { compare: space, budgetTime: "auto", variant: v.name };
  const traces: RunTrace[] = [];
  for (const [k, seed] of seeds.entries()) {
    const s = await createStrategy("random", r.space, {
      seed,
      candidateOf: r.candidateOf,
      hyper: v.hyper,
    });
    const b = budgetedRun(s, replayMeasurer(r), ts);
    traces.push(
      await runStrategy(b.strategy, b.measurer, {
        budget: r.space.size,
        store,
        run: { strategy: v.name, seed: k, config },
      }),
    );
  }
  const ids = await runIdsOf(store, [v.name], seeds.length, config);
  const out = await timeResults(store, ids, new Map([[v.name, traces]]), ts);
  return { curve: out.curves[v.name], score: out.scores[v.name] };
}

if (import.meta.main) {
  await runCommand("methodology_random", async (argv) => {
    const f = parseFlags(argv, {
      sets: { type: "string", default: "40" },
      repeats: { type: "string", default: "25" },
      md: { type: "string", default: "" },
    }, USAGE);
    const sets = Number(f.sets), repeats = Number(f.repeats);
    const md = f.md;
    // The pooled curve's bagging grows with its runs (one estimator per run): at most 100, as the reference's longest.
    const pooledRuns = Math.min(100, sets * repeats);
    if (!(Number.isInteger(sets) && sets >= 2 && Number.isInteger(repeats) && repeats >= 1)) {
      throw new UsageError("--sets must be an integer >= 2 and --repeats an integer >= 1");
    }
    const kt = await readPreset("random@kt");
    const variants: Variant[] = [{ name: "random", hyper: {} }, {
      name: "random@kt",
      hyper: kt.hyper,
    }];
    const spaces = Object.keys(REFERENCE_RANDOM).filter((s) => s !== "aggregate");
    const lines: string[] = [
      `| variant | space | mean of ${sets} sets of ${repeats} | sd | reference | z of reference | ${pooledRuns} runs pooled |`,
      "| --- | --- | --- | --- | --- | --- | --- |",
    ];
    const t0 = performance.now();
    for (const v of variants) {
      // perSet[k] = this set's standardised curve per space, for the aggregate.
      const perSet: Record<string, number[]>[] = Array.from({ length: sets }, () => ({}));
      const pooled: Record<string, number[]> = {};
      for (const space of spaces) {
        const scores: number[] = [];
        for (let k = 0; k < sets; k++) {
          const seeds = Array.from({ length: repeats }, (_, i) => k * repeats + i);
          const { curve, score } = await runs(space, v, seeds);
          scores.push(score);
          perSet[k][space] = curve;
        }
        const all = await runs(space, v, Array.from({ length: pooledRuns }, (_, i) => i));
        pooled[space] = all.curve;
        const ref = REFERENCE_RANDOM[space];
        const s = setSpread(scores, ref);
        lines.push(
          `| ${v.name} | ${space} | ${s.mean.toFixed(3)} | ${s.sd.toFixed(3)} | ${
            ref.map((x) => x.toFixed(3)).join(" / ")
          } | ${s.z.map((x) => x.toFixed(1)).join(" / ")} | ${all.score.toFixed(3)} |`,
        );
        console.error(`${v.name} ${space}: ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      }
      const agg = perSet.map((c) =>
        methodologyRanking(spaces.map((sp) => ({ [v.name]: c[sp] })))[0].score
      );
      const aggAll = methodologyRanking(spaces.map((s) => ({ [v.name]: pooled[s] })))[0].score;
      const s = setSpread(agg, REFERENCE_RANDOM.aggregate);
      lines.push(
        `| ${v.name} | **aggregate** | ${s.mean.toFixed(3)} | ${s.sd.toFixed(3)} | ${
          REFERENCE_RANDOM.aggregate.map((x) => x.toFixed(3)).join(" / ")
        } | ${s.z.map((x) => x.toFixed(1)).join(" / ")} | ${aggAll.toFixed(3)} |`,
      );
    }
    const table = lines.join("\n");
    console.log(table);
    if (md) await Deno.writeTextFile(md, table + "\n");
  });
}
