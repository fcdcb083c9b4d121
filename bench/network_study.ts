/**
 * The RL study at network scale (issue 17, item 7): per network and
 * strategy, one cold tuning session of the whole network under one trial
 * budget (Ansor's gradient task scheduler, tuner/network_tuning.ts), each in
 * its own fresh records database under `--out`; then the network runs with
 * the tuned kernels in the executor. Reported per network and strategy: the
 * end-to-end estimate at the end, the measured end-to-end latency, and the
 * trials used: how many trials the strategy needed to reach a common target,
 * within `--within` (5%) of the best final estimate of any strategy on that
 * network, as the RL study reports the samples each strategy needed.
 *
 * ```sh
 * deno run -A bench/network_study.ts --networks resnet18,squeezenet1_1 --trials 200 \
 *   --template conv2d-packed,matmul-packed --out runs/network_study
 * ```
 *
 * Writes `network_study.json` and, per network, `network_study_<net>.svg` and
 * `.png` (the estimate against trials, one line per strategy) into `--out`;
 * a markdown table on stdout; progress on stderr. Bad arguments exit 2 with
 * one line.
 * @module
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { checkOutputDir } from "../cli/output.ts";
import { HelpRequest, oneLine, parseFlags, positiveInt, UsageError } from "../cli/args.ts";
import { parseTrace, type Trace } from "../ir/trace.ts";
import { measureEndToEnd } from "../network/end_to_end.ts";
import { layoutName, parseLayout } from "../network/layout.ts";
import { loadNetwork } from "../network/load.ts";
import { type Network, NetworkError } from "../network/network.ts";
import { extractTasks, type Task } from "../network/tasks.ts";
import { randomWeights, type Weights } from "../network/weights.ts";
import { svgToPNG, tuningCurveSVG } from "../plots/tuning_curve.ts";
import { TEMPLATE_NAMES } from "../search/templates/registry.ts";
import { estimateCurve, tuneNetwork } from "../tuner/network_tuning.ts";
import { STRATEGY_NAMES, TRANSFER_STRATEGIES } from "../tuner/strategies.ts";
import { trialsUsed } from "../tuner/trials_used.ts";

/** Strategies of the study by default: the RL study's, and ours (`ansor` on sketches). */
export const STUDY_STRATEGIES: readonly string[] = [
  "random",
  "xgb",
  "xgb-rank",
  "ga",
  "ppo",
  "dqn",
  "bandit",
  "ansor",
];

/** Usage text of the study. */
export const NETWORK_STUDY_USAGE = `usage: deno run -A bench/network_study.ts [options]
  --networks N[,N]    networks (default resnet18,squeezenet1_1; built-in names, FILE.json, FILE.onnx)
  --strategies S[,S]  strategies (default ${STUDY_STRATEGIES.join(",")})
  --trials N          trial budget of each session (default 200)
  --template T[,T]    knob templates of the knob strategies (e.g. conv2d-packed,matmul-packed)
  --out DIR           one fresh database per session, the JSON and the plots (default runs/network_study)
  --within F          the target: within F of the best final estimate (default 0.05)
  --seed N            seed of strategies, scheduler, weights and input (default 1)
  --size N            input height and width of the built-in networks (default 224)
  --layout L          NCHW (default) or NCHW16c: convolutions on channel blocks
                      (conv2d_nchwc and depthwise_conv2d_nchwc, their blocked templates),
                      the activations kept blocked between them, as tune-network --layout
  --repeat N          timed forward passes of each tuned network (default 3)
  --no-seed-default   do not measure each task's default schedule as its first trial
  --no-transfer       do not pretrain a task's cost model (xgb, xgb-rank) on the other
                      tasks' measurements`;

/** Parsed arguments of the study. */
export interface NetworkStudyArgs {
  networks: string[];
  strategies: string[];
  trials: number;
  templates: string[];
  out: string;
  within: number;
  seed: number;
  size: number;
  repeat: number;
  seedDefault: boolean;
  /** Pretrain each task's cost model on the other tasks' samples (`--no-transfer`: false). */
  transfer: boolean;
  /** Channel block of the convolutions' activations (`--layout`; 1: NCHW). */
  block: number;
}

function names(flag: string, v: string, known?: readonly string[]): string[] {
  const items = [...new Set(v.split(",").map((s) => s.trim()))];
  for (const s of items) {
    if (s === "" || (known && !known.includes(s))) {
      throw new UsageError(`--${flag} "${s}" is not one of ${known?.join(", ") ?? "the names"}`);
    }
  }
  return items;
}

/**
 * Parses the command line; a bad flag is a {@link UsageError}.
 *
 * @example
 * ```ts
 * import { parseNetworkStudyArgs } from "./network_study.ts";
 * const a = parseNetworkStudyArgs(["--strategies", "random,xgb", "--trials", "40"]);
 * if (a.networks.join() !== "resnet18,squeezenet1_1" || a.trials !== 40) throw new Error();
 * ```
 */
export function parseNetworkStudyArgs(argv: string[]): NetworkStudyArgs {
  const v = parseFlags(argv, {
    networks: { type: "string", default: "resnet18,squeezenet1_1" },
    strategies: { type: "string", default: STUDY_STRATEGIES.join(",") },
    trials: { type: "string" },
    template: { type: "string" },
    out: { type: "string", default: "runs/network_study" },
    within: { type: "string" },
    seed: { type: "string" },
    size: { type: "string" },
    repeat: { type: "string" },
    "no-seed-default": { type: "boolean", default: false },
    "no-transfer": { type: "boolean", default: false },
    layout: { type: "string", default: "NCHW" },
  }, NETWORK_STUDY_USAGE);
  let block: number;
  try {
    block = parseLayout(v.layout!);
  } catch (e) {
    throw new UsageError(`--layout: ${(e as Error).message}`);
  }
  const within = v.within === undefined ? 0.05 : Number(v.within);
  if (!(within >= 0 && within < 1)) {
    throw new UsageError(`--within must be a fraction in [0, 1), got "${v.within}"`);
  }
  if (v.out!.trim() === "") throw new UsageError("--out must name a directory");
  return {
    networks: names("networks", v.networks!),
    strategies: names(
      "strategies",
      v.strategies!,
      STRATEGY_NAMES.filter((s) => !TRANSFER_STRATEGIES.includes(s)),
    ),
    trials: positiveInt("trials", v.trials, 200),
    templates: v.template === undefined ? [] : names("template", v.template, TEMPLATE_NAMES),
    out: v.out!,
    within,
    seed: positiveInt("seed", v.seed, 1),
    size: positiveInt("size", v.size, 224),
    repeat: positiveInt("repeat", v.repeat, 3),
    seedDefault: !v["no-seed-default"],
    transfer: !v["no-transfer"],
    block,
  };
}

/** One row of the study (a network and a strategy). */
export interface StudyRow {
  network: string;
  strategy: string;
  /** Trials measured (the budget, unless every task's space ran out). */
  trials: number;
  /** Trials to reach the network's target; null: never. */
  trialsUsed: number | null;
  /** The end-to-end estimate at the end, ms. */
  estimateMs: number;
  /** The whole network run by the executor with the tuned kernels, ms. */
  measuredMs: number;
  /** The executor's output matches the reference executor's. */
  matchesReference: boolean;
  /** Wall seconds of the session (tuning and the executor). */
  seconds: number;
}

/**
 * The study's table in markdown: one row per network and strategy.
 *
 * @example
 * ```ts
 * import { studyTable } from "./network_study.ts";
 * const md = studyTable([{ network: "n", strategy: "random", trials: 8, trialsUsed: null,
 *   estimateMs: 2, measuredMs: 3, matchesReference: true, seconds: 1 }], { n: 9 });
 * if (!md.includes("| n | random | 8 | - | 2.000 | 3.000 | 9.000 | yes | 1 |")) throw new Error(md);
 * ```
 */
export function studyTable(rows: StudyRow[], untunedMs: Record<string, number>): string {
  const head = [
    "network",
    "strategy",
    "trials",
    "trials used",
    "estimate (ms)",
    "measured (ms)",
    "default schedules (ms)",
    "matches reference",
    "seconds",
  ];
  return [
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((r) =>
      `| ${
        [
          r.network,
          r.strategy,
          r.trials,
          r.trialsUsed ?? "-",
          r.estimateMs.toPrecision(4),
          r.measuredMs.toPrecision(4),
          untunedMs[r.network]?.toPrecision(4) ?? "-",
          r.matchesReference ? "yes" : "NO",
          Math.round(r.seconds),
        ].join(" | ")
      } |`
    ),
  ].join("\n");
}

/** The best trace of each task of a session, by task key. */
function tracesOf(tasks: { key: string; bestTrace?: string }[]): Map<string, Trace> {
  return new Map(
    tasks.flatMap((t) => t.bestTrace ? [[t.key, parseTrace(JSON.parse(t.bestTrace))]] : []),
  );
}

/** A loaded network of the study. */
interface StudyNetwork {
  name: string;
  network: Network;
  weights: Weights;
  tasks: Task[];
}

/**
 * Runs the study: every network and strategy, then the table, the JSON and
 * the plots; returns the JSON written.
 */
export async function networkStudy(argv: string[]): Promise<Record<string, unknown>> {
  const a = parseNetworkStudyArgs(argv);
  const nets: StudyNetwork[] = [];
  for (const spec of a.networks) {
    let loaded;
    try {
      loaded = await loadNetwork(spec, { size: a.size });
    } catch (e) {
      if (e instanceof NetworkError) throw new UsageError(`--networks: ${e.message}`);
      throw e;
    }
    const network = loaded.network;
    const tasks = extractTasks(network, a.block);
    if (tasks.length === 0) throw new UsageError(`--networks ${spec} has no tunable layer`);
    nets.push({
      name: network.name,
      network,
      tasks,
      weights: loaded.weights ?? randomWeights(network, a.seed),
    });
  }
  const dbOf = (net: string, strategy: string) => join(a.out, `${net}-${strategy}.db`);
  const outputs = [
    "network_study.json",
    ...nets.flatMap((n) => [`network_study_${n.name}.svg`, `network_study_${n.name}.png`]),
  ];
  checkOutputDir(a.out, outputs, { flag: "--out" });
  for (const n of nets) {
    for (const s of a.strategies) {
      if (existsSync(dbOf(n.name, s))) {
        throw new UsageError(
          `--out "${a.out}" already holds ${dbOf(n.name, s)}: each session needs a fresh database`,
        );
      }
    }
  }
  mkdirSync(a.out, { recursive: true });

  const rows: StudyRow[] = [];
  const untunedMs: Record<string, number> = {};
  const curves: Record<string, Record<string, number[]>> = {};
  const targets: Record<string, number> = {};
  for (const n of nets) {
    // Default schedules in NCHW, as tune-network's and network_peers' figure of them.
    const untuned = await measureEndToEnd(n.network, n.weights, { repeat: a.repeat, seed: a.seed });
    untunedMs[n.name] = untuned.latencyMs;
    console.error(
      `${n.name}: ${n.tasks.length} tasks, default schedules ${untuned.latencyMs.toFixed(1)} ms`,
    );
    curves[n.name] = {};
    const netRows: StudyRow[] = [];
    for (const strategy of a.strategies) {
      const started = performance.now();
      const o = await tuneNetwork({
        tasks: n.tasks,
        db: dbOf(n.name, strategy),
        trials: a.trials,
        strategy,
        templates: a.templates,
        scheduler: "gradient",
        seed: a.seed,
        warm: false,
        seedDefault: a.seedDefault,
        transfer: a.transfer,
        onRound: (r, t) =>
          console.error(
            `[${n.name} ${strategy}] ${r.trialsUsed}/${a.trials}: ${t.key} best ${
              t.bestSeconds === undefined ? "-" : (t.bestSeconds * 1e3).toPrecision(4)
            } ms; estimate ${(r.objective * 1e3).toPrecision(5)} ms`,
          ),
      });
      const e = await measureEndToEnd(n.network, n.weights, {
        traces: tracesOf(o.tasks),
        repeat: a.repeat,
        seed: a.seed,
        check: true,
        block: a.block,
      });
      curves[n.name][strategy] = estimateCurve(o);
      netRows.push({
        network: n.name,
        strategy,
        trials: o.tasks.reduce((s, t) => s + t.trials, 0),
        trialsUsed: null,
        estimateMs: o.objectiveSeconds * 1e3,
        measuredMs: e.latencyMs,
        matchesReference: e.matchesReference === true,
        seconds: (performance.now() - started) / 1e3,
      });
      console.error(
        `[${n.name} ${strategy}] estimate ${(o.objectiveSeconds * 1e3).toFixed(2)} ms, measured ${
          e.latencyMs.toFixed(2)
        } ms, ${netRows.at(-1)!.seconds.toFixed(0)} s`,
      );
    }
    const u = trialsUsed(curves[n.name], a.within);
    targets[n.name] = u.target;
    for (const r of netRows) r.trialsUsed = u.used[r.strategy] ?? null;
    rows.push(...netRows);
    const svg = tuningCurveSVG(
      Object.entries(curves[n.name]).map(([label, values]) => ({ label, values })),
      {
        title: `${n.name}: end-to-end estimate against trials (gradient scheduler)`,
        y: "estimate (ms, log scale)",
        logY: true,
      },
    );
    await Deno.writeTextFile(join(a.out, `network_study_${n.name}.svg`), svg);
    await Deno.writeFile(
      join(a.out, `network_study_${n.name}.png`),
      await svgToPNG(svg, { scale: 2 }),
    );
  }
  console.log(studyTable(rows, untunedMs));
  const out = {
    networks: nets.map((n) => n.name),
    strategies: a.strategies,
    trials: a.trials,
    templates: a.templates,
    size: a.size,
    seed: a.seed,
    seedDefault: a.seedDefault,
    transfer: a.transfer,
    layout: layoutName(a.block),
    within: a.within,
    note: "trialsUsed: trials to reach targetMs, within `within` of the best final estimate of " +
      "any strategy on that network (null: never); estimateMs sums weight x best latency of the " +
      "tunable layers; measuredMs is the whole network run by the executor with the tuned kernels",
    untunedMs,
    targetMs: targets,
    rows,
    curves,
  };
  await Deno.writeTextFile(join(a.out, "network_study.json"), JSON.stringify(out));
  return out;
}

if (import.meta.main) {
  try {
    await networkStudy(Deno.args);
  } catch (e) {
    if (e instanceof HelpRequest) {
      console.log(e.message);
      Deno.exit(0);
    }
    if (e instanceof UsageError) {
      console.error(`network_study: ${oneLine(e.message)}`);
      Deno.exit(2);
    }
    throw e;
  }
}
