/**
 * Cost-model speed: XGBoost (through FFI) training on 10,000 records x 40
 * features and predicting 10,000 candidates, median of 5 runs each, for the
 * regression and the ranking objective. Goals: training < 2 s, predicting
 * < 50 ms. Prints the load average too, since the machine may be shared.
 *
 * ```sh
 * deno run --allow-ffi --allow-sys bench/costmodel_bench.ts [runs, default 5] [nthread, default 1]
 * ```
 *
 * Each line shows the median and, in brackets, the fastest and slowest run:
 * a wide spread means other processes competed for the cores (XGBoost's
 * OpenMP threads then wait for each other at every barrier).
 * @module
 */
import { median } from "../ir/stats.ts";
import { createPrng } from "../ir/prng.ts";
import type { Matrix } from "../costmodel/regressor.ts";
import { type XGBoostObjective, XGBoostRegressor } from "../costmodel/xgboost.ts";
import { xgboostVersion } from "../costmodel/_xgboost_ffi.ts";
import { positionalArgs, positiveArg, runCommand } from "../cli/args.ts";

/** What `--help` prints. */
const USAGE = `usage:
  deno run --allow-ffi --allow-sys bench/costmodel_bench.ts [runs, default 5] [nthread, default 1]`;

/** Goal for one training call, seconds. */
export const TRAIN_GOAL = 2;
/** Goal for one batch prediction, seconds. */
export const PREDICT_GOAL = 0.05;

/** A synthetic record set: uniform features, a nonlinear target, groups of 100. */
export function syntheticRecords(
  rows: number,
  cols: number,
  seed = 1,
): { x: Matrix; y: Float32Array; groups: number[] } {
  const prng = createPrng(seed);
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = prng.next();
  const y = new Float32Array(rows);
  for (let i = 0; i < rows; i++) {
    const r = data.subarray(i * cols, (i + 1) * cols);
    y[i] = r[0] * r[1] + (r[2] > 0.5 ? 1 : 0) + Math.sin(6 * r[3]) * r[4];
  }
  const groups: number[] = [];
  for (let left = rows; left > 0; left -= 100) groups.push(Math.min(100, left));
  return { x: { data, rows, cols }, y, groups };
}

/** Median, fastest and slowest of some timings. */
export interface Timing {
  median: number;
  min: number;
  max: number;
}

function timing(xs: number[]): Timing {
  const s = [...xs].sort((a, b) => a - b);
  return { median: median(s), min: s[0], max: s[s.length - 1] };
}

/**
 * Seconds of `runs` fresh trainings (default options but `nthread`) and
 * batch predictions for one objective.
 */
export function benchXGBoost(
  objective: XGBoostObjective,
  runs: number,
  nthread = 1,
): { train: Timing; predict: Timing } {
  const { x, y, groups } = syntheticRecords(10_000, 40, 1);
  const candidates = syntheticRecords(10_000, 40, 2).x;
  const train: number[] = [], predict: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = new XGBoostRegressor({ objective, nthread });
    try {
      let t = performance.now();
      r.fit(x, y, { groups });
      train.push((performance.now() - t) / 1000);
      t = performance.now();
      r.predict(candidates);
      predict.push((performance.now() - t) / 1000);
    } finally {
      r.dispose();
    }
  }
  return { train: timing(train), predict: timing(predict) };
}

if (import.meta.main) {
  await runCommand("costmodel_bench", (argv) => {
    const args = positionalArgs(argv, USAGE, 2);
    const runs = positiveArg(args[0], "runs", 5);
    const nthread = positiveArg(args[1], "nthread", 1);
    const load = () => Deno.loadavg().map((l) => l.toFixed(2)).join(" ");
    const ms = (t: Timing) =>
      `${(t.median * 1000).toFixed(1)} ms [${(t.min * 1000).toFixed(1)}-${
        (t.max * 1000).toFixed(1)
      }]`;
    console.log(
      `XGBoost ${
        xgboostVersion().join(".")
      }, nthread ${nthread} of ${navigator.hardwareConcurrency} ` +
        `cores, load average ${load()}; median of ${runs} runs, 10,000 records x 40 features`,
    );
    let ok = true;
    for (const objective of ["reg:squarederror", "rank:pairwise"] as const) {
      const { train, predict } = benchXGBoost(objective, runs, nthread);
      const trainOk = train.median < TRAIN_GOAL, predictOk = predict.median < PREDICT_GOAL;
      ok &&= trainOk && predictOk;
      console.log(
        `${objective.padEnd(17)} train ${ms(train)} (goal < ${TRAIN_GOAL} s: ${
          trainOk ? "ok" : "TOO SLOW"
        })  predict ${ms(predict)} (goal < ${PREDICT_GOAL * 1000} ms: ${
          predictOk ? "ok" : "TOO SLOW"
        })`,
      );
    }
    console.log(`load average after: ${load()}; goals ${ok ? "hold" : "DO NOT hold"}`);
    return Promise.resolve();
  });
}
