/**
 * `deno task costmodel-eval`: train a cost model on part of a set of
 * measured candidates and report, on the held-out rest, Kendall's tau,
 * pairwise accuracy, top-k recall and the regret of the model's pick, with a
 * predicted-vs-measured scatter plot (SVG and PNG) and one line of JSON.
 *
 * Data: `--db runs.db` (every valid record; fixed-length trace features, so
 * records of several workloads share one model; `--split workload` holds
 * out whole workloads, the leakage-safe split) or `--space gemm_RTX_3090`
 * (a replayed Kernel Tuner cache; knob features).
 * @module
 */
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import { featurize } from "../costmodel/features.ts";
import { knobFeaturizer } from "../costmodel/featurizers.ts";
import { evaluateRanking } from "../costmodel/metrics.ts";
import { MLPRegressor } from "../costmodel/mlp.ts";
import type { Matrix, Regressor } from "../costmodel/regressor.ts";
import { XGBoostRegressor } from "../costmodel/xgboost.ts";
import { createPrng } from "../ir/prng.ts";
import { parseTrace } from "../ir/trace.ts";
import { replaySpaceFromFile } from "../search/replay.ts";
import { svgToPNG } from "../plots/tuning_curve.ts";
import { scatterSVG } from "../plots/scatter.ts";
import { parseFlags, runJsonCommand, UsageError } from "./args.ts";
import { checkOutputDir, printResult } from "./output.ts";
import { stopPoints, StopRequested, watchStop } from "./stop.ts";

/** Usage text of `costmodel-eval`. */
export const COSTMODEL_EVAL_USAGE =
  `usage: deno task costmodel-eval (--db PATH | --space NAME) [options]

  --db PATH        records database to learn from (must exist; opened read-only)
  --space NAME     or a Kernel Tuner cache (a name from data/kerneltuner, or a path)
  --model NAME     xgb | xgb-rank | mlp | mlp-rank (default xgb-rank)
  --train F        share (0-1) or count of records to train on (default 0.8)
  --split KIND     random | workload (default random)
  --seed N         seed of the split and the model (default 1)
  --out DIR        directory of the scatter plot (default runs/costmodel)
  --quiet          no progress line on stderr
  --help           this text`;

/** Models `costmodel-eval` knows. */
export const MODELS = ["xgb", "xgb-rank", "mlp", "mlp-rank"] as const;

interface Dataset {
  name: string;
  x: Matrix;
  /** Throughput (GFLOP/s, or 1/ms for replay): higher is better. */
  y: number[];
  /** Group of each row (workload key), for the leakage-safe split. */
  group: string[];
}

function fromDb(path: string): Dataset {
  const db = RecordsDB.open(path, { mode: "read" });
  try {
    const traces = [], y: number[] = [], group: string[] = [];
    for (const run of db.runs()) {
      const w = db.workload(run.workloadId)!;
      for (const c of db.candidates(run.id)) {
        if (c.result?.errorKind !== "none" || !c.result.gflops) continue;
        traces.push(parseTrace(c.trace));
        y.push(c.result.gflops);
        group.push(w.key);
      }
    }
    if (traces.length < 10) {
      throw new UsageError(`--db ${path} holds ${traces.length} valid records; at least 10 needed`);
    }
    const m = featurize(traces, "fixed", { invalid: "zeros" });
    return { name: path, x: { data: m.data, rows: m.rows, cols: m.cols }, y, group };
  } finally {
    db.close();
  }
}

async function fromSpace(spec: string): Promise<Dataset> {
  const r = await replaySpaceFromFile(spec);
  const points = [], y: number[] = [];
  for (let i = 0; i < r.space.size; i++) {
    const e = r.evaluateIndex(i);
    if (e.errorKind !== "none" || !e.seconds) continue;
    points.push(r.space.point(i));
    y.push(1e-3 / e.seconds);
  }
  const x = knobFeaturizer(r.space)(points.map((knobs) => ({ knobs })));
  return { name: r.name, x, y, group: y.map(() => r.name) };
}

function rows(m: Matrix, idx: number[]): Matrix {
  const data = new Float32Array(idx.length * m.cols);
  idx.forEach((r, i) => data.set(m.data.subarray(r * m.cols, (r + 1) * m.cols), i * m.cols));
  return { data, rows: idx.length, cols: m.cols };
}

function makeModel(name: string, seed: number): Regressor {
  if (name.startsWith("mlp")) {
    return new MLPRegressor({ seed, loss: name === "mlp-rank" ? "rank" : "mse" });
  }
  return new XGBoostRegressor({
    objective: name === "xgb-rank" ? "rank:pairwise" : "reg:squarederror",
    seed,
  });
}

/** Runs the evaluation; returns the JSON summary. */
export async function costmodelEval(argv: string[]): Promise<Record<string, unknown>> {
  const v = parseFlags(
    argv,
    {
      db: { type: "string" },
      space: { type: "string" },
      model: { type: "string", default: "xgb-rank" },
      train: { type: "string", default: "0.8" },
      split: { type: "string", default: "random" },
      seed: { type: "string", default: "1" },
      out: { type: "string", default: "runs/costmodel" },
      quiet: { type: "boolean", default: false },
    },
    COSTMODEL_EVAL_USAGE,
  );
  if (!v.db === !v.space) throw new UsageError("Give exactly one of --db and --space");
  if (!(MODELS as readonly string[]).includes(v.model!)) {
    throw new UsageError(`Unknown model "${v.model}"; known: ${MODELS.join(", ")}`);
  }
  if (v.split !== "random" && v.split !== "workload") {
    throw new UsageError(`--split must be "random" or "workload", got "${v.split}"`);
  }
  const train = Number(v.train);
  if (!(train > 0)) {
    throw new UsageError(`--train must be a share in (0, 1) or a count, got "${v.train}"`);
  }
  if (!/^-?\d+$/.test(v.seed!.trim())) {
    throw new UsageError(`--seed must be an integer, got "${v.seed}"`);
  }
  const seed = Number(v.seed);
  const base = `${v.model}_${(v.space ?? "db").replace(/[^A-Za-z0-9_.-]/g, "_")}`;
  checkOutputDir(v.out!, [`${base}.svg`, `${base}.png`], { flag: "--out", db: v.db });
  let data: Dataset;
  try {
    data = v.db ? fromDb(v.db) : await fromSpace(v.space!);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(
      `${v.db ? "--db " + v.db : "--space " + v.space}: ${(e as Error).message}`,
    );
  }
  // Split: shuffled rows, or whole workloads held out.
  const prng = createPrng(seed);
  const order = data.y.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  let trainIdx: number[], testIdx: number[];
  if (v.split === "workload") {
    const groups = [...new Set(data.group)];
    if (groups.length < 2) {
      throw new UsageError("--split workload needs records of at least two workloads");
    }
    const held = new Set(
      groups.slice(0, Math.max(1, Math.round(groups.length * (1 - Math.min(train, 0.99))))),
    );
    trainIdx = order.filter((i) => !held.has(data.group[i]));
    testIdx = order.filter((i) => held.has(data.group[i]));
  } else {
    const n = train < 1
      ? Math.round(order.length * train)
      : Math.min(order.length - 1, Math.floor(train));
    trainIdx = order.slice(0, n);
    testIdx = order.slice(n);
  }
  const model = makeModel(v.model!, seed);
  // Ctrl-C / SIGTERM: stop before the plot is written (a second one: at once). The database is
  // only read, so nothing is lost; a fit in progress (synchronous) ends first.
  const stop = watchStop({
    onStop: (why) => console.error(`costmodel-eval: ${why}: stopping (again: at once)`),
    onHardStop: (why, code) => {
      console.error(
        `costmodel-eval: ${why}: stopped at once; ${
          v.db ? "--db is only read, " : ""
        }no plot written`,
      );
      Deno.exit(code);
    },
  });
  const check = stopPoints(stop.signal, 0);
  let written = "";
  try {
    // Targets: throughput normalised by the best in training, per workload group.
    const best = new Map<string, number>();
    trainIdx.forEach((i) =>
      best.set(data.group[i], Math.max(best.get(data.group[i]) ?? 0, data.y[i]))
    );
    const target = (i: number) => data.y[i] / (best.get(data.group[i]) ?? Math.max(...data.y));
    if (!v.quiet) console.error(`costmodel-eval: fitting ${v.model} on ${trainIdx.length} records`);
    await check();
    const started = performance.now();
    await model.fit(rows(data.x, trainIdx), Float32Array.from(trainIdx, target));
    const fitSeconds = (performance.now() - started) / 1000;
    await check();
    const pred = Array.from(await model.predict(rows(data.x, testIdx)));
    await check();
    const truth = testIdx.map((i) => data.y[i]);
    const metrics = evaluateRanking(pred, truth);
    const unit = v.db ? "GFLOP/s" : "1/ms";
    printResult(
      `${data.name}: ${v.model} trained on ${trainIdx.length}, tested on ${testIdx.length} (${v.split} split), fit ${
        fitSeconds.toFixed(2)
      } s`,
    );
    printResult(
      [
        "| metric | value |",
        "| --- | --- |",
        ...Object.entries(metrics).map(([k, val]) => `| ${k} | ${val.toFixed(3)} |`),
      ].join("\n"),
    );
    const svg = scatterSVG(pred.map((p, i) => ({ x: truth[i], y: p })), {
      title: `${v.model} on ${data.name}: held-out predictions`,
      x: `measured throughput (${unit})`,
      y: "predicted score",
      diagonal: false,
    });
    await Deno.mkdir(v.out!, { recursive: true });
    const path = join(v.out!, base);
    await Deno.writeTextFile(`${path}.svg`, svg);
    await Deno.writeFile(`${path}.png`, await svgToPNG(svg));
    written = `${path}.svg`;
    printResult(`scatter: ${path}.svg, ${path}.png`);
    await check();
    return {
      data: data.name,
      model: v.model,
      split: v.split,
      train: trainIdx.length,
      test: testIdx.length,
      fit_seconds: fitSeconds,
      ...metrics,
    };
  } catch (e) {
    if (!(e instanceof StopRequested)) throw e;
    console.error(
      `costmodel-eval: stopped (${stop.reason()}); ${
        v.db ? `--db ${v.db} is only read, unchanged; ` : ""
      }${written ? `the plot ${written} is complete` : "no plot written"}`,
    );
    Deno.exit(stop.exitCode());
  } finally {
    stop.dispose();
    model.dispose();
  }
}

if (import.meta.main) await runJsonCommand("costmodel-eval", costmodelEval);
