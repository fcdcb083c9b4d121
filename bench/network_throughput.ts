/**
 * Network tuning throughput: trials per second of `tuneNetwork` (what
 * `deno task tune-network` runs) on a built-in network, from an empty kernel
 * cache and records database, for each `--unity` (kernels per compiler
 * process), alternated `--rounds` times so that both settings see the same
 * load; and the final speed: the estimate (sum over tasks of weight x best
 * latency) and the network measured by the executor with the tuned kernels.
 *
 * ```sh
 * deno run -A bench/network_throughput.ts [--network resnet18] [--trials 192] \
 *   [--per-round 8] [--unity 1,8] [--rounds 1] [--strategy random] [--seed 1] [--repeat 5]
 * ```
 *
 * Results: bench/results/tuning_throughput.md.
 * @module
 */
import { join } from "node:path";
import { parseTrace, type Trace } from "../ir/trace.ts";
import { builtinNetwork } from "../network/builtin.ts";
import { measureEndToEnd } from "../network/end_to_end.ts";
import { extractTasks } from "../network/tasks.ts";
import { randomWeights } from "../network/weights.ts";
import { type NetworkTuningOutcome, tuneNetwork } from "../tuner/network_tuning.ts";
import { RecordsDB } from "../datasets/db.ts";
import { parseFlags, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/network_throughput.ts [--network resnet18] [--trials 192] \\
    [--per-round 8] [--unity 1,8] [--rounds 1] [--strategy random] [--seed 1] [--repeat 5]`;

/** What one run measured. */
export interface NetworkThroughputRow {
  unity: number;
  trials: number;
  /** Wall seconds of the tuning (the executor's check and timing excluded). */
  seconds: number;
  perSecond: number;
  /** Compiler wall seconds of the kernels (records' build_seconds; a unity build's shared out). */
  buildSeconds: number;
  /** Runner seconds of the kernels (records' run_seconds). */
  runSeconds: number;
  /** Sum over tasks of weight x best latency, ms. */
  estimateMs: number;
  /** The network run by the executor with the tuned kernels, median ms. */
  measuredMs: number;
  matchesReference: boolean;
  load: number[];
}

/** The best trace of each task, by task key. */
function tunedTraces(o: NetworkTuningOutcome): Map<string, Trace> {
  return new Map(
    o.tasks.flatMap((t) => t.bestTrace ? [[t.key, parseTrace(JSON.parse(t.bestTrace))]] : []),
  );
}

/** Markdown table of rows. */
export function networkThroughputTable(rows: NetworkThroughputRow[]): string {
  return [
    "| unity | trials | tuning wall s | trials/s | build s | measure s | estimate ms | measured ms | matches | load at start |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) =>
      `| ${r.unity} | ${r.trials} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(2)} | ${
        r.buildSeconds.toFixed(1)
      } | ${r.runSeconds.toFixed(1)} | ${r.estimateMs.toFixed(2)} | ${
        r.measuredMs.toFixed(2)
      } | ${r.matchesReference} | ${r.load.map((x) => x.toFixed(2)).join(" ")} |`
    ),
  ].join("\n");
}

if (import.meta.main) {
  await runCommand("network_throughput", async (argv) => {
    const v = parseFlags(argv, {
      network: { type: "string", default: "resnet18" },
      trials: { type: "string", default: "192" },
      "per-round": { type: "string", default: "8" },
      unity: { type: "string", default: "1,8" },
      rounds: { type: "string", default: "1" },
      strategy: { type: "string", default: "random" },
      seed: { type: "string", default: "1" },
      repeat: { type: "string", default: "5" },
    }, USAGE);
    let net;
    try {
      net = builtinNetwork(v.network!);
    } catch (e) {
      throw new UsageError(`--network: ${(e as Error).message}`);
    }
    const tasks = extractTasks(net);
    const weights = randomWeights(net, Number(v.seed));
    console.log(
      `network throughput: ${v.network}, ${tasks.length} tasks, ${v.trials} trials, ${
        v["per-round"]
      } per round, ${v.strategy}, ${navigator.hardwareConcurrency} cores, load average ${
        Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
      }`,
    );
    const rows: NetworkThroughputRow[] = [];
    for (let round = 0; round < Number(v.rounds); round++) {
      for (const unity of v.unity!.split(",").map(Number)) {
        const dir = await Deno.makeTempDir({ prefix: "tb-net-throughput-" });
        try {
          const load = Deno.loadavg();
          const t0 = performance.now();
          const o = await tuneNetwork({
            tasks,
            db: join(dir, "t.db"),
            cacheDir: join(dir, "kernels"),
            trials: Number(v.trials),
            perRound: Number(v["per-round"]),
            strategy: v.strategy!,
            seed: Number(v.seed),
            unity,
          });
          const seconds = (performance.now() - t0) / 1000;
          const trials = o.tasks.reduce((s, t) => s + t.trials, 0);
          const db = RecordsDB.open(join(dir, "t.db"));
          let buildSeconds = 0, runSeconds = 0;
          for (const run of db.runs()) {
            for (const [, r] of db.measured(run.id)) {
              buildSeconds += r.buildSeconds;
              runSeconds += r.runSeconds;
            }
          }
          db.close();
          const e = await measureEndToEnd(net, weights, {
            traces: tunedTraces(o),
            repeat: Number(v.repeat),
            seed: Number(v.seed),
            check: true,
          });
          const row = {
            unity,
            trials,
            seconds,
            perSecond: trials / seconds,
            buildSeconds,
            runSeconds,
            estimateMs: o.objectiveSeconds * 1e3,
            measuredMs: e.latencyMs,
            matchesReference: e.matchesReference ?? false,
            load,
          };
          rows.push(row);
          console.log(networkThroughputTable([row]).split("\n")[2]);
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      }
    }
    console.log(networkThroughputTable(rows));
  });
}
