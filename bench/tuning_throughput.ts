/**
 * Tuning throughput: measured trials per second of the live tuning loop, and
 * where its wall time goes (build, measurement, search and model overhead),
 * for each strategy with and without overlapping builds and measurement.
 * Every run starts from an empty kernel cache and records database, so every
 * candidate is compiled and measured.
 *
 * ```sh
 * deno run -A bench/tuning_throughput.ts [--shape 256,256,256] [--trials 200] \
 *   [--strategies random,xgb] [--modes serial,overlap,unity,unity+overlap,unity+race,unity+screen] \
 *   [--batch 8] [--unity 8] [--race 2] [--opt=-O3] [--screen-opt=-O2] \
 *   [--finalists 8] [--final-rounds 3] [--repeat 3] [--min-repeat-ms 10] [--seed 1]
 * ```
 *
 * Goal (issue 8): at least 10 trials/s on matmul 256 on 2 cores, with search
 * and model overhead under 10% of wall time. `build` and `measure` are the
 * wall seconds the loop waited on each; with overlap they run at the same
 * time and can add up to more than the wall time. `overhead` is proposing,
 * observing (model training), code generation and the records database.
 * Modes `unity` compile each round's candidates together, up to `--unity`
 * per file and compiler process (measure/builder.ts `batch`); modes `race`
 * give a candidate whose first repeat is more than `--race` times slower than
 * the best so far no further repeats (`TuneOptions.race`). Modes `screen`
 * build the candidates at `--screen-opt` (cheaper) instead of `--opt`.
 *
 * Final speed, the same in every mode: after the run its `--finalists`
 * fastest candidates are built again at `--opt` (the full level, whatever the
 * mode screened at) and timed again in `--final-rounds` rounds
 * (tuner/finalists.ts); `final GFLOP/s` is the best median of those, so a
 * mode that screens cheaply reports only kernels built and timed at the full
 * level. `final s` is what that stage took (not in trials/s).
 * @module
 */
import { join } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import { sqliteRecordStore } from "../datasets/record_store.ts";
import type { Workload } from "../ir/workloads.ts";
import { createBuilder, DEFAULT_FLAGS } from "../measure/builder.ts";
import { createNativeMeasurer } from "../measure/native.ts";
import { createRunner } from "../measure/runner.ts";
import type { TimingOptions } from "../measure/types.ts";
import { randomSearch } from "../search/random.ts";
import { createStrategy } from "../tuner/strategies.ts";
import { finalistsOf, retimeFinalists } from "../tuner/finalists.ts";
import { defaultSpace } from "../search/sketch.ts";
import type { Strategy } from "../search/strategy.ts";
import { defaultTemplate, templateSpace } from "../search/templates/registry.ts";
import { tune } from "../tuner/loop.ts";
import { parseFlags, runCommand, shapeFlag, UsageError } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/tuning_throughput.ts [--shape 256,256,256] [--trials 200] \\
    [--strategies random,xgb] [--modes serial,overlap,unity,unity+overlap,unity+race,unity+screen] \\
    [--batch 8] [--unity 8] [--race 2] [--opt=-O3] [--screen-opt=-O2] \\
    [--finalists 8] [--final-rounds 3] [--repeat 3] [--min-repeat-ms 10] [--seed 1]`;

/**
 * Wall seconds of a run by part: the loop's (`TuneTimings` of tuner/loop.ts)
 * with its measurer's share split into code generation, build and measurement
 * (`NativeTimings` of measure/native.ts).
 */
export interface ThroughputTimings {
  wall: number;
  propose: number;
  observe: number;
  /** Trace hashing (the loop) and code generation (the measurer). */
  source: number;
  build: number;
  measure: number;
  records: number;
}

/** What one throughput run measured. */
export interface ThroughputRow {
  strategy: string;
  overlap: boolean;
  /** Kernels per compiler process. */
  unity: number;
  /** Racing factor (`TuneOptions.race`), if racing. */
  race?: number;
  /** Distinct candidates measured. */
  trials: number;
  /** Trials per wall second. */
  perSecond: number;
  /** Best GFLOP/s found, if any candidate was valid. */
  bestGflops?: number;
  /** Optimisation flag the candidates were screened (built and timed) at. */
  opt: string;
  /** Best median GFLOP/s of the finalists built again at the full level; undefined without finalists. */
  finalGflops?: number;
  /** Wall seconds of that re-build and re-timing. */
  finalSeconds: number;
  timings: ThroughputTimings;
  /** Mean wall seconds of one compiler process (records' build_seconds, cached builds excluded). */
  compileSeconds: number;
  /** GFLOP/s of every valid candidate, by trace hash (to compare modes on the same candidates). */
  gflopsByHash: Map<string, number>;
}

/** Options of {@link measureThroughput}. */
export interface ThroughputOptions {
  workload: Workload;
  /** `random` (sketch space) or a knob strategy over the workload's template (e.g. `xgb`). */
  strategy: string;
  trials: number;
  overlap: boolean;
  batch: number;
  /** Kernels per compiler process (1: one file each). */
  unity: number;
  /** Racing factor (`TuneOptions.race`); default: no racing. */
  race?: number;
  seed: number;
  /** Optimisation flag replacing `-O3` of the builder's default flags: the full level. */
  opt: string;
  /** Optimisation flag the candidates are built at while tuning; default `opt`. */
  screenOpt?: string;
  /** Fastest candidates built again at `opt` and re-timed after the run; default 0 (none). */
  finalists?: number;
  /** Rounds of that re-timing; default 3. */
  finalRounds?: number;
  timing: Partial<TimingOptions>;
  /** Scratch directory (database and kernel cache); removed afterwards. */
  dir: string;
}

async function strategyOf(name: string, w: Workload, seed: number): Promise<Strategy> {
  if (name === "random") return randomSearch(defaultSpace(w), { seed });
  const t = templateSpace(defaultTemplate(w), w);
  return await createStrategy(name, t.space, { seed, candidateOf: t.candidateOf });
}

/** Runs one tuning loop from an empty cache and reports its throughput. */
export async function measureThroughput(o: ThroughputOptions): Promise<ThroughputRow> {
  const db = RecordsDB.open(join(o.dir, "t.db"));
  const screenOpt = o.screenOpt ?? o.opt;
  const flags = DEFAULT_FLAGS.map((f) => (f === "-O3" ? screenOpt : f));
  const builder = createBuilder({
    cacheDir: join(o.dir, "kernels"),
    flags,
    batch: o.unity,
    // Builds overlapping a measurement take only the cycles it leaves idle.
    background: o.overlap,
  });
  const measurer = createNativeMeasurer({
    workload: o.workload,
    builder,
    runner: createRunner({ timing: o.timing }),
  });
  let closed = false;
  try {
    const w = o.workload;
    const runId = db.startRun({
      strategy: o.strategy,
      seed: o.seed,
      trials: o.trials,
      target: "cpu",
      workloadId: db.upsertWorkload({ name: w.name, shape: w.shape, flops: w.flops }),
      config: { bench: "tuning_throughput", overlap: o.overlap, unity: o.unity, race: o.race },
      machine: {},
      compiler: await builder.describe(),
      tunebookVersion: "bench",
    });
    const out = await tune({
      strategy: await strategyOf(o.strategy, w, o.seed),
      measurer,
      store: sqliteRecordStore(db, { close: false }),
      runId,
      trials: o.trials,
      flops: w.flops,
      batchSize: o.batch,
      overlap: o.overlap,
      ...(o.race !== undefined ? { race: o.race } : {}),
    });
    const m = measurer.timings;
    const timings: ThroughputTimings = {
      wall: out.timings.wall,
      propose: out.timings.propose,
      observe: out.timings.observe,
      source: out.timings.key + m.source,
      build: m.build,
      measure: m.run,
      records: out.timings.records,
    };
    const best = db.best(runId)?.result.gflops ?? undefined;
    // The tuning run's workers go first: none of them may share the cores with the re-timing.
    await measurer.close();
    closed = true;
    // Final speed: the fastest candidates built again at the full level and timed again.
    const t0 = performance.now();
    let finalGflops: number | undefined;
    const picked = finalistsOf(db, w, o.finalists ?? 0, { runs: [runId] });
    if (picked.length > 0) {
      const full = createNativeMeasurer({
        workload: w,
        builder: createBuilder({
          cacheDir: join(o.dir, "kernels"),
          flags: DEFAULT_FLAGS.map((f) => (f === "-O3" ? o.opt : f)),
          batch: o.unity,
        }),
        runner: createRunner({ timing: o.timing }),
      });
      try {
        const retimed = await retimeFinalists(picked, full, o.finalRounds ?? 3);
        const s = retimed[0]?.medianSeconds;
        if (s !== undefined && Number.isFinite(s)) finalGflops = w.flops / s / 1e9;
      } finally {
        await full.close();
      }
    }
    const finalSeconds = (performance.now() - t0) / 1000;
    const gflopsByHash = new Map<string, number>();
    let compiles = 0, compileSeconds = 0;
    for (const [hash, r] of db.measured(runId)) {
      if (r.gflops) gflopsByHash.set(hash, r.gflops);
      if (r.buildSeconds > 0) compiles++, compileSeconds += r.buildSeconds;
    }
    return {
      strategy: o.strategy,
      overlap: o.overlap,
      unity: o.unity,
      ...(o.race !== undefined ? { race: o.race } : {}),
      trials: out.measured,
      perSecond: out.measured / timings.wall,
      ...(best !== undefined ? { bestGflops: best } : {}),
      opt: screenOpt,
      ...(finalGflops !== undefined ? { finalGflops } : {}),
      finalSeconds,
      timings,
      compileSeconds: compiles ? compileSeconds / compiles : 0,
      gflopsByHash,
    };
  } finally {
    if (!closed) await measurer.close();
    db.close();
  }
}

/** Search and model overhead of a run: proposing, observing, code generation, records. */
export function overheadSeconds(t: ThroughputTimings): number {
  return t.propose + t.observe + t.source + t.records;
}

/**
 * How measuring during builds changed the figures: for candidates measured in
 * both runs, quantiles of GFLOP/s with overlap over GFLOP/s without.
 */
export function overlapNoise(
  serial: ThroughputRow,
  overlapped: ThroughputRow,
): { matched: number; p10: number; median: number; p90: number } | undefined {
  const ratios: number[] = [];
  for (const [hash, g] of serial.gflopsByHash) {
    const o = overlapped.gflopsByHash.get(hash);
    if (o) ratios.push(o / g);
  }
  if (ratios.length === 0) return undefined;
  ratios.sort((a, b) => a - b);
  const q = (f: number) => ratios[Math.min(ratios.length - 1, Math.floor(f * ratios.length))];
  return { matched: ratios.length, p10: q(0.1), median: q(0.5), p90: q(0.9) };
}

/** Markdown table of throughput rows. */
export function throughputTable(rows: ThroughputRow[]): string {
  const pct = (x: number, t: ThroughputTimings) => `${(100 * x / t.wall).toFixed(0)}%`;
  const lines = [
    "| strategy | overlap | unity | race | trials | wall s | trials/s | build | measure | overhead (search+model) | gcc s/kernel | best GFLOP/s | screened at | final GFLOP/s | final s |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const r of rows) {
    const t = r.timings;
    lines.push(
      `| ${r.strategy} | ${r.overlap ? "on" : "off"} | ${r.unity} | ${
        r.race ?? "off"
      } | ${r.trials} | ${t.wall.toFixed(1)} | ${r.perSecond.toFixed(2)} | ${
        t.build.toFixed(1)
      } s (${pct(t.build, t)}) | ${t.measure.toFixed(1)} s (${pct(t.measure, t)}) | ${
        overheadSeconds(t).toFixed(2)
      } s (${pct(overheadSeconds(t), t)}: propose ${t.propose.toFixed(2)}, observe ${
        t.observe.toFixed(2)
      }, codegen ${t.source.toFixed(2)}, records ${t.records.toFixed(2)}) | ${
        r.compileSeconds.toFixed(2)
      } | ${r.bestGflops?.toFixed(1) ?? "none"} | ${r.opt} | ${
        r.finalGflops?.toFixed(1) ?? "none"
      } | ${r.finalSeconds.toFixed(1)} |`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) {
  await runCommand("tuning_throughput", async (argv) => {
    const v = parseFlags(argv, {
      shape: { type: "string", default: "256,256,256" },
      trials: { type: "string", default: "200" },
      strategies: { type: "string", default: "random,xgb" },
      modes: { type: "string", default: "serial,overlap" },
      batch: { type: "string", default: "8" },
      unity: { type: "string", default: "8" },
      race: { type: "string", default: "2" },
      opt: { type: "string", default: "-O3" },
      "screen-opt": { type: "string", default: "-O2" },
      finalists: { type: "string", default: "8" },
      "final-rounds": { type: "string", default: "3" },
      repeat: { type: "string", default: "3" },
      "min-repeat-ms": { type: "string", default: "10" },
      seed: { type: "string", default: "1" },
    }, USAGE);
    const workload = shapeFlag("matmul", v.shape!);
    const timing = { number: 1, repeat: Number(v.repeat), minRepeatMs: Number(v["min-repeat-ms"]) };
    console.log(
      `tuning throughput: ${workload.name} ${
        workload.shape.join("x")
      }, ${v.trials} trials, batch ${v.batch}, ${v.opt}, timing repeat ${timing.repeat} min-repeat-ms ${timing.minRepeatMs}, ${navigator.hardwareConcurrency} cores, load average ${
        Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
      }`,
    );
    const rows: ThroughputRow[] = [];
    for (const strategy of v.strategies!.split(",")) {
      for (const mode of v.modes!.split(",")) {
        // A mode is "serial", or parts joined by "+": overlap, unity, race.
        const parts = mode.split("+");
        const known = ["serial", "overlap", "unity", "race", "screen"];
        if (
          parts.some((p) => !known.includes(p)) || (parts.includes("serial") && parts.length > 1)
        ) {
          throw new UsageError(
            `Unknown mode "${mode}"; a mode is "serial" or parts of ${
              known.slice(1).join(", ")
            } joined by "+"`,
          );
        }
        const dir = await Deno.makeTempDir({ prefix: "tb-throughput-" });
        try {
          rows.push(
            await measureThroughput({
              workload,
              strategy,
              trials: Number(v.trials),
              overlap: parts.includes("overlap"),
              batch: Number(v.batch),
              unity: parts.includes("unity") ? Number(v.unity) : 1,
              ...(parts.includes("race") ? { race: Number(v.race) } : {}),
              seed: Number(v.seed),
              opt: v.opt!,
              ...(parts.includes("screen") ? { screenOpt: v["screen-opt"]! } : {}),
              finalists: Number(v.finalists),
              finalRounds: Number(v["final-rounds"]),
              timing,
              dir,
            }),
          );
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      }
    }
    console.log(throughputTable(rows));
    for (const strategy of new Set(rows.map((r) => r.strategy))) {
      const plain = (r: ThroughputRow) =>
        r.strategy === strategy && r.unity === 1 && !r.race && r.opt === v.opt;
      const serial = rows.find((r) => plain(r) && !r.overlap);
      const over = rows.find((r) => plain(r) && r.overlap);
      const noise = serial && over ? overlapNoise(serial, over) : undefined;
      if (noise) {
        console.log(
          `${strategy}: ${noise.matched} candidates measured in both modes; GFLOP/s with overlap / without: p10 ${
            noise.p10.toFixed(2)
          }, median ${noise.median.toFixed(2)}, p90 ${noise.p90.toFixed(2)}`,
        );
      }
    }
    const goal = rows.filter((r) =>
      r.perSecond >= 10 && overheadSeconds(r.timings) < 0.1 * r.timings.wall
    );
    console.log(
      `goal (>= 10 trials/s, overhead < 10% of wall): ${
        goal.length
          ? goal.map((r) =>
            `${r.strategy}/${
              [
                r.unity > 1 ? "unity" : "",
                r.overlap ? "overlap" : "",
                r.race ? "race" : "",
                r.opt !== v.opt ? "screen" : "",
              ]
                .filter(Boolean).join("+") || "serial"
            }`
          ).join(", ")
          : "not met"
      }`,
    );
  });
}
