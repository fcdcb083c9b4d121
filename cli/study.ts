/**
 * `deno task study`: the README's main job. A real tuning study on the
 * embedded defaults: for each matmul size, the naive triple loop (the
 * workload's default schedule) and random search over the default design
 * space, measured in the same run, recorded in a database, and reported as
 * a table with the best schedule printed as code.
 *
 * Options: `--sizes 512,1024` `--trials N` (tune's default) `--seed 1` `--db runs/study.db`.
 * @module
 */
import { createWorkload } from "../ir/workloads.ts";
import { createBuilder } from "../measure/builder.ts";
import { createRunner } from "../measure/runner.ts";
import { median } from "../ir/stats.ts";
import { referenceSource, signatureOf, toleranceOf } from "../measure/kernel_source.ts";
import { stderrProgress } from "../tuner/progress.ts";
import { runSession } from "../tuner/session.ts";
import { DEFAULTS } from "../ir/defaults.ts";
import { parseFlags, runJsonCommand, UsageError } from "./args.ts";
import { watchRuns } from "./stop.ts";
import { RecordsDB } from "../datasets/db.ts";

/** Usage text of `study`. */
export const STUDY_USAGE =
  `usage: deno task study [--sizes 512,1024] [--trials N] [--seed 1] [--db runs/study.db]

  --sizes N,N,...   matmul sizes (default 512,1024)
  --trials N        random trials per size (default ${DEFAULTS.tune.trials}, as tune)
  --seed N          seed of the search (default 1)
  --db PATH         records database (default runs/study.db); curves beside it
  --quiet           no progress bar
  --help            this text`;
import {
  bestSoFar,
  type CurveSeries,
  PALETTE,
  svgToPNG,
  tuningCurveSVG,
} from "../plots/tuning_curve.ts";
import { printResult } from "./output.ts";
import { dirname } from "node:path";

/** One row of the study's table. */
export interface StudyRow {
  size: number;
  naive_gflops: number;
  best_gflops: number | null;
  speedup: number | null;
  valid: number;
  errors: number;
  run_id: number;
}

/** Measures the naive loop nest (the reference kernel itself) of a workload. */
export async function measureNaive(name: string, shape: number[]): Promise<number> {
  const w = createWorkload(name, shape);
  const builder = createBuilder();
  const [b] = await builder.build([{ source: referenceSource(w) }]);
  if (b.errorKind !== "none") throw new Error(`naive kernel did not build: ${b.error}`);
  const runner = createRunner({
    timing: DEFAULTS.tune.finalistTiming,
    timeoutSeconds: 120,
  });
  try {
    const [r] = await runner.run([{
      artifact: b.artifact!,
      reference: b.artifact!,
      signature: signatureOf(w),
      seed: 0,
      ...toleranceOf(w),
    }]);
    if (r.errorKind !== "none") throw new Error(`naive kernel failed: ${r.errorKind} ${r.error}`);
    return w.flops / median(r.times) / 1e9;
  } finally {
    await runner.close();
  }
}

/** Runs the study; returns its rows. */
export async function study(argv: string[]): Promise<StudyRow[]> {
  const v = parseFlags(
    argv,
    {
      sizes: { type: "string", default: "512,1024" },
      trials: { type: "string", default: String(DEFAULTS.tune.trials) },
      seed: { type: "string", default: "1" },
      db: { type: "string", default: "runs/study.db" },
      quiet: { type: "boolean", default: false },
    },
    STUDY_USAGE,
  );
  const sizes = v.sizes!.split(",").map((p) => p.trim());
  if (sizes.some((p) => !/^\d+$/.test(p) || Number(p) < 1)) {
    throw new UsageError(`--sizes must be positive integers, got "${v.sizes}"`);
  }
  const trials = Number(v.trials), seed = Number(v.seed);
  if (!/^-?\d+$/.test(v.seed!.trim())) throw new UsageError(`--seed must be an integer`);
  if (!Number.isInteger(trials) || trials < 1) throw new UsageError("--trials must be >= 1");
  RecordsDB.open(v.db!).close(); // an unusable --db is refused before anything is measured
  const rows: StudyRow[] = [];
  const curves: CurveSeries[] = [];
  const naives: number[] = [];
  for (const n of sizes.map(Number)) {
    if (!v.quiet) {
      console.error(`\nmatmul ${n}x${n}x${n}: naive triple loop, then ${trials} random trials`);
    }
    const naive = await measureNaive("matmul", [n, n, n]);
    const progress = v.quiet ? undefined : stderrProgress();
    const stop = watchRuns("study", v.db!, () => progress?.done());
    let s;
    try {
      s = await runSession({
        signal: stop.signal,
        onStart: stop.onStart,
        db: v.db!,
        workload: { name: "matmul", shape: [n, n, n] },
        strategy: "random",
        seed,
        trials,
        onProgress: progress?.update,
      });
    } finally {
      progress?.done();
      stop.dispose();
    }
    if (stop.stopped(s)) Deno.exit(stop.exitCode());
    rows.push({
      size: n,
      naive_gflops: naive,
      best_gflops: s.best_gflops,
      speedup: s.best_gflops === null ? null : s.best_gflops / naive,
      valid: s.valid,
      errors: s.errors,
      run_id: s.run_id,
    });
    if (s.bestTrace) printResult(`best schedule of matmul ${n}:\n${s.bestTrace}`);
    const db = RecordsDB.open(v.db!);
    const perTrial = db.candidates(s.run_id).map((c) => c.result?.gflops ?? NaN);
    db.close();
    curves.push({ label: `matmul ${n}`, values: bestSoFar(perTrial) });
    naives.push(naive);
  }
  // Each size's naive loop is drawn as a dashed line in its curve's colour.
  const svg = tuningCurveSVG(curves, {
    title: `Random search, ${trials} trials, seed ${seed}`,
    baseline: naives.map((value, i) => ({
      label: `naive ${sizes[i]} (${value.toFixed(1)})`,
      value,
      colour: PALETTE[i % PALETTE.length],
    })),
  });
  const base = v.db!.replace(/\.db$/, "");
  await Deno.mkdir(dirname(base), { recursive: true });
  await Deno.writeTextFile(`${base}.svg`, svg);
  await Deno.writeFile(`${base}.png`, await svgToPNG(svg));
  printResult("\n| matmul | naive GFLOP/s | best of random GFLOP/s | speedup | valid | errors |");
  printResult("| --- | --- | --- | --- | --- | --- |");
  for (const r of rows) {
    printResult(
      `| ${r.size} | ${r.naive_gflops.toFixed(2)} | ${r.best_gflops?.toFixed(1) ?? "-"} | ${
        r.speedup?.toFixed(1) ?? "-"
      }x | ${r.valid} | ${r.errors} |`,
    );
  }
  printResult(`records: ${v.db}; tuning curves: ${base}.svg, ${base}.png`);
  return rows;
}

if (import.meta.main) {
  await runJsonCommand("study", study);
}
