/**
 * A whole network against PyTorch on the CPU, and its convolutions against
 * oneDNN, in one run:
 *
 * ```sh
 * deno run -A bench/network_peers.ts --network resnet18 --db runs.db [--threads 2]
 *   [--size 224] [--rounds 3] [--repeat 5] [--no-layers] [--python /usr/bin/python3]
 *   [--plot layers.svg|.png] [--layout NCHW|NCHW16c]
 * ```
 *
 * - **PyTorch**: torchvision's model of the same name (a built-in network
 *   only), random weights, eval mode, batch 1, `--threads` threads
 *   (`bench/peers/torch_network.py`, Debian's python3-torch and
 *   python3-torchvision).
 * - **tunebook**: the executor (network/executor.ts) with the best record of
 *   each task in `--db` (any cpu run, as `tune-network` leaves them), other
 *   kernels on default schedules, its output checked against the reference;
 *   also the same network with every kernel on its default schedule (NCHW).
 *   `OMP_NUM_THREADS` is `--threads`. `--layout NCHW16c` runs the
 *   convolutions blocked (`conv2d_nchwc`), as `tune-network --layout
 *   NCHW16c` tuned them; each layer is then timed on blocked input and
 *   output, as oneDNN's layer is on the layouts it picks.
 *
 * Rounds interleave PyTorch and tunebook (a burst of load on the shared
 * cores then hits one round of each); each round's figure is the median of
 * `--repeat` forward passes, and the ratio PyTorch / tunebook (above 1:
 * tunebook is faster) is taken round by round. With layers (default), each
 * distinct convolution of the network (depthwise and grouped ones too, as
 * oneDNN's grouped convolution) is timed by tunebook's harness (its
 * best record) and by oneDNN through bench/peers.ts, in `--rounds` rounds
 * over all layers (each peer's figure its best round), one ratio per layer,
 * and beside it the ratio round by round (the two peers timed in turn each
 * round: its median and range say how much of a layer's figure is noise);
 * `--plot` draws those ratios as bars (plots/ratio_bars.ts), those below 0.9
 * in red. The last line is JSON with every figure.
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DatabaseError, RecordsDB } from "../datasets/db.ts";
import { parseTrace, type Trace } from "../ir/trace.ts";
import { BUILTIN_NETWORKS } from "../network/builtin.ts";
import { createExecutor } from "../network/executor.ts";
import { measureEndToEnd } from "../network/end_to_end.ts";
import { layoutName, parseLayout } from "../network/layout.ts";
import { loadNetwork } from "../network/load.ts";
import { type Network, NetworkError, sizeOf } from "../network/network.ts";
import { extractTasks, type Task, taskKey } from "../network/tasks.ts";
import { randomWeights, type Weights } from "../network/weights.ts";
import { fillUniform } from "../measure/prng.ts";
import { warmStart } from "../tuner/task_scheduler.ts";
import { CONV_WORKLOADS, DEFAULT_CACHE, pairedRatio, type PeerRow, runPeers } from "./peers.ts";
import { ratioBarsSVG } from "../plots/ratio_bars.ts";
import { writePlot } from "../plots/figure.ts";
import { ensureSetupGroup } from "../cli/setup_group.ts";
import { parseFlags, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/network_peers.ts --network resnet18 --db runs.db [--threads 2]
    [--size 224] [--rounds 3] [--repeat 5] [--no-layers] [--python /usr/bin/python3]
    [--plot layers.svg|.png] [--layout NCHW|NCHW16c]`;

const TORCH_SCRIPT = fileURLToPath(new URL("./peers/torch_network.py", import.meta.url));

/** What PyTorch gave, or why nothing. */
export type TorchFigure = { timesMs: number[]; version: string } | { unavailable: string };

/**
 * Times a torchvision network in a PyTorch process.
 *
 * @example
 * ```ts ignore
 * import { torchLatency } from "./network_peers.ts";
 * const t = await torchLatency({ python: "/usr/bin/python3", network: "resnet18", size: 224, threads: 2, repeat: 5 });
 * console.log("timesMs" in t ? t.timesMs : t.unavailable);
 * ```
 */
export async function torchLatency(
  o: { python: string; network: string; size: number; threads: number; repeat: number },
): Promise<TorchFigure> {
  if (!Object.hasOwn(BUILTIN_NETWORKS, o.network)) {
    return { unavailable: `${o.network} is not a torchvision model (built-in networks only)` };
  }
  // First use: install PyTorch if missing, saying what and why (TUNEBOOK_NO_SETUP=1: don't).
  await ensureSetupGroup("torch", "bench/network_peers.ts times the network in PyTorch");
  let out;
  try {
    out = await new Deno.Command(o.python, {
      args: [TORCH_SCRIPT, o.network, String(o.size), String(o.threads), "1", String(o.repeat)],
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (e) {
    return { unavailable: `cannot run ${o.python}: ${(e as Error).message}` };
  }
  const dec = new TextDecoder();
  if (!out.success) {
    const why = dec.decode(out.stderr).trim().split("\n").at(-1);
    return {
      unavailable:
        `${why} (install python3-torch and python3-torchvision: bash scripts/setup.sh torch)`,
    };
  }
  const r = JSON.parse(dec.decode(out.stdout));
  return { timesMs: r.timesMs, version: r.torch };
}

/**
 * The best recorded trace of each task of a network in a records database.
 *
 * @example
 * ```ts ignore
 * import { recordedTraces } from "./network_peers.ts";
 * import { builtinNetwork } from "../network/builtin.ts";
 * const traces = recordedTraces("net.db", builtinNetwork("resnet18"));
 * console.log(traces.size, "tasks tuned");
 * ```
 */
export function recordedTraces(db: string, net: Network, block = 1): Map<string, Trace> {
  const tasks = extractTasks(net, block);
  const records = RecordsDB.open(db, { mode: "read" });
  try {
    const starts = warmStart(records, tasks.map((t) => t.workload));
    return new Map(
      tasks.flatMap((t, i) => {
        const s = starts[i].bestTrace;
        return s ? [[taskKey(t.workload), parseTrace(JSON.parse(s))] as const] : [];
      }),
    );
  } finally {
    records.close();
  }
}

/**
 * The flags `names` of a network bench as positive integers; `fail` is
 * called with `--NAME must be a positive integer` for the first that is not.
 *
 * @example
 * ```ts
 * import { positiveFlags } from "./network_peers.ts";
 * const fail = (m: string): never => { throw new Error(m); };
 * const n = positiveFlags({ rounds: "3", repeat: "5" }, ["rounds", "repeat"], fail);
 * if (n.rounds !== 3 || n.repeat !== 5) throw new Error();
 * ```
 */
export function positiveFlags<K extends string>(
  values: Partial<Record<K, string>>,
  names: readonly K[],
  fail: (message: string) => never,
): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const name of names) {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer`);
    out[name] = n;
  }
  return out;
}

/**
 * What a network bench runs: `network` loaded (random weights where it has
 * none), its tasks with channel block `block`, and the best record of each
 * in the records database `db` (none without `db`). An unknown or unreadable
 * network, or a records database that cannot be opened, calls `fail` with
 * one line naming the flag and the cause; any other error is thrown.
 *
 * @example
 * ```ts ignore
 * import { benchNetwork } from "./network_peers.ts";
 * const fail = (m: string): never => { console.error(m); Deno.exit(2); };
 * const { net, tasks, traces } = await benchNetwork({ network: "resnet18", size: 224, block: 16, db: "net.db" }, fail);
 * console.log(net.name, traces.size, "of", tasks.length, "tasks tuned");
 * ```
 */
export async function benchNetwork(
  o: { network: string; size: number; block: number; db?: string },
  fail: (message: string) => never,
): Promise<{ net: Network; weights: Weights; tasks: Task[]; traces: Map<string, Trace> }> {
  let loaded;
  try {
    loaded = await loadNetwork(o.network, { size: o.size });
  } catch (e) {
    if (e instanceof NetworkError) fail(`--network: ${e.message}`);
    throw e;
  }
  const net = loaded.network;
  let traces = new Map<string, Trace>();
  try {
    if (o.db !== undefined) traces = recordedTraces(o.db, net, o.block);
  } catch (e) {
    if (e instanceof DatabaseError) fail(`--db: ${e.message}`);
    throw e;
  }
  return {
    net,
    weights: loaded.weights ?? randomWeights(net, 1),
    tasks: extractTasks(net, o.block),
    traces,
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * A network compiled with `traces` (channel block `block`) and run once on
 * seeded input; `time(repeat)` gives its median forward pass (ms) over
 * `repeat` passes, one call per round.
 *
 * @example
 * ```ts ignore
 * import { executorRounds } from "./network_peers.ts";
 * import { builtinNetwork } from "../network/builtin.ts";
 * import { randomWeights } from "../network/weights.ts";
 * const net = builtinNetwork("resnet18");
 * const ex = await executorRounds(net, randomWeights(net, 1), new Map(), 1);
 * console.log(ex.time(5), "ms");
 * ex.close();
 * ```
 */
export async function executorRounds(
  net: Network,
  weights: Weights,
  traces: Map<string, Trace>,
  block: number,
): Promise<{ time: (repeat: number) => number; close: () => void }> {
  const ex = await createExecutor(net, weights, { traces, block });
  const input = new Float32Array(sizeOf(net.input.shape));
  fillUniform(1, [input]);
  ex.run(input);
  return { time: (repeat) => ex.latency({ repeat, warmup: 1 }).medianMs, close: () => ex.close() };
}

/** The convolutions against oneDNN in one line: the issue's target and the weighted time. */
export interface LayersSummary {
  /** Convolutions at `target` of oneDNN's GFLOP/s or better. */
  atTarget: number;
  /** Convolutions both peers measured. */
  of: number;
  target: number;
  /**
   * oneDNN's time over tunebook's, each layer counted as often as the
   * network runs it (above 1: tunebook's convolutions take less time).
   */
  weightedSpeed: number;
}

/**
 * Sums up the layers: how many reach `target` of oneDNN, and the weighted time ratio.
 *
 * @example
 * ```ts
 * import { layersSummary } from "./network_peers.ts";
 * const s = layersSummary([
 *   { weight: 3, tunebookSeconds: 1e-3, onednnSeconds: 1e-3 },
 *   { weight: 1, tunebookSeconds: 2e-3, onednnSeconds: 1e-3 },
 * ]);
 * if (s.atTarget !== 1 || s.of !== 2 || s.weightedSpeed !== 0.8) throw new Error(JSON.stringify(s));
 * ```
 */
export function layersSummary(
  layers: { weight: number; tunebookSeconds: number; onednnSeconds: number }[],
  target = 0.9,
): LayersSummary {
  const tb = layers.reduce((a, l) => a + l.weight * l.tunebookSeconds, 0);
  const dnn = layers.reduce((a, l) => a + l.weight * l.onednnSeconds, 0);
  return {
    atTarget: layers.filter((l) => l.onednnSeconds / l.tunebookSeconds >= target).length,
    of: layers.length,
    target,
    weightedSpeed: dnn / tb,
  };
}

/** tunebook / oneDNN GFLOP/s of a layer, when both peers measured it. */
function layerRatio(row: PeerRow): number | undefined {
  const a = row.figures.tunebook, b = row.figures.onednn;
  return a && b && "gflops" in a && "gflops" in b ? a.gflops / b.gflops : undefined;
}

if (import.meta.main) {
  await runCommand("network_peers", async (argv) => {
    const v = parseFlags(argv, {
      network: { type: "string", default: "resnet18" },
      db: { type: "string" },
      threads: { type: "string", default: "2" },
      size: { type: "string", default: "224" },
      rounds: { type: "string", default: "3" },
      repeat: { type: "string", default: "5" },
      python: { type: "string", default: "/usr/bin/python3" },
      "no-layers": { type: "boolean", default: false },
      cache: { type: "string", default: DEFAULT_CACHE },
      plot: { type: "string" },
      layout: { type: "string", default: "NCHW" },
    }, USAGE);
    const fail = (m: string): never => {
      throw new UsageError(m);
    };
    let block = 1;
    try {
      block = parseLayout(v.layout!);
    } catch (e) {
      fail(`--layout: ${(e as Error).message}`);
    }
    const { threads, size, rounds, repeat } = positiveFlags(
      v,
      ["threads", "size", "rounds", "repeat"],
      fail,
    );
    if (v.plot !== undefined && !/\.(svg|png)$/.test(v.plot)) {
      fail(`--plot "${v.plot}" must end in .svg or .png`);
    }
    Deno.env.set("OMP_NUM_THREADS", String(threads));
    const { net, weights, tasks, traces } = await benchNetwork(
      { network: v.network!, size, block, ...(v.db ? { db: v.db } : {}) },
      fail,
    );
    console.log(
      `network_peers: ${net.name} ${net.input.shape.join("x")}, ${
        layoutName(block)
      }, ${threads} threads, ${rounds} rounds of ${repeat} passes; ${traces.size} of ${tasks.length} tasks tuned in ${
        v.db ?? "(no --db)"
      }; load average ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")} (a shared machine)`,
    );
    const check = await measureEndToEnd(net, weights, { traces, check: true, repeat: 1, block });
    const tuned = await executorRounds(net, weights, traces, block);
    const plain = await executorRounds(net, weights, new Map(), 1);
    const perRound: { torchMs?: number; tunedMs: number; defaultMs: number }[] = [];
    let torchVersion: string | undefined, torchUnavailable: string | undefined;
    try {
      for (let r = 1; r <= rounds; r++) {
        const t = await torchLatency({
          python: v.python!,
          network: v.network!,
          size,
          threads,
          repeat,
        });
        if ("unavailable" in t) torchUnavailable = t.unavailable;
        else torchVersion = t.version;
        perRound.push({
          ...("timesMs" in t ? { torchMs: median(t.timesMs) } : {}),
          tunedMs: tuned.time(repeat),
          defaultMs: plain.time(repeat),
        });
        console.error(`[network_peers] round ${r}: ${JSON.stringify(perRound.at(-1))}`);
      }
    } finally {
      tuned.close();
      plain.close();
    }
    const ratios = perRound.flatMap((r) => r.torchMs ? [r.torchMs / r.tunedMs] : []);
    const best = (k: "torchMs" | "tunedMs" | "defaultMs") =>
      Math.min(...perRound.map((r) => r[k] ?? Infinity));
    console.log(
      `| network | PyTorch ${
        torchVersion ?? ""
      } (ms) | tunebook tuned (ms) | tunebook default schedules (ms) | PyTorch / tunebook, round by round |`,
    );
    console.log(`| --- | --- | --- | --- | --- |`);
    console.log(
      `| ${net.name} | ${
        torchUnavailable ? `unavailable: ${torchUnavailable}` : best("torchMs").toFixed(1)
      } | ${best("tunedMs").toFixed(1)} | ${best("defaultMs").toFixed(1)} | ${
        ratios.length
          ? `median ${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}-${
            Math.max(...ratios).toFixed(2)
          }x)`
          : "-"
      } |`,
    );
    console.log(
      `tunebook's output ${
        check.matchesReference ? "matches" : "DOES NOT match"
      } the reference (max relative error ${check.maxRelativeError!.toExponential(1)})`,
    );
    let layers: PeerRow[] = [];
    let summary: LayersSummary | undefined;
    if (!v["no-layers"]) {
      const convs = tasks.filter((t) => CONV_WORKLOADS.includes(t.workload.name));
      layers = await runPeers({
        workloads: convs.map((t) => t.workload),
        peers: ["tunebook", "onednn"],
        threads,
        timing: { warmup: 1, repeat, minRepeatMs: 20 },
        tunebook: { traces: [...traces.values()], cacheDir: join(v.cache!, "kernels") },
        cacheDir: v.cache,
        rounds,
        log: (line) => console.error(`[network_peers] ${line}`),
      });
      const weightOf = (row: PeerRow) => convs.find((t) => t.workload === row.workload)!.weight;
      console.log(
        `| layer | weight | tunebook GFLOP/s | oneDNN GFLOP/s | tunebook / oneDNN | round by round: median (range) |`,
      );
      console.log(`| --- | --- | --- | --- | --- | --- |`);
      for (const row of layers) {
        const a = row.figures.tunebook, b = row.figures.onednn;
        const g = (f: typeof a) =>
          f && "gflops" in f
            ? f.gflops.toFixed(1)
            : f && "none" in f
            ? "no record in --db"
            : f
            ? Object.values(f)[0]
            : "-";
        const ratio = layerRatio(row)?.toFixed(2) ?? "-";
        const p = pairedRatio(row, "tunebook", "onednn");
        const paired = p ? `${p.median.toFixed(2)} (${p.min.toFixed(2)}-${p.max.toFixed(2)})` : "-";
        console.log(
          `| ${taskKey(row.workload)} | ${weightOf(row)} | ${g(a)} | ${
            g(b)
          } | ${ratio} | ${paired} |`,
        );
      }
      summary = layersSummary(layers.flatMap((row) => {
        const a = row.figures.tunebook, b = row.figures.onednn;
        return a && b && "seconds" in a && "seconds" in b
          ? [{
            weight: weightOf(row),
            tunebookSeconds: a.seconds,
            onednnSeconds: b.seconds,
          }]
          : [];
      }));
      console.log(
        `convolutions at ${summary.target} of oneDNN or better: ${summary.atTarget} of ${summary.of}; ` +
          `their time weighted by how often the network runs each, oneDNN / tunebook: ${
            summary.weightedSpeed.toFixed(2)
          }`,
      );
      if (v.plot) {
        const bars = layers.flatMap((row) => {
          const ratio = layerRatio(row);
          return ratio === undefined ? [] : [{ label: taskKey(row.workload), ratio }];
        });
        const svg = ratioBarsSVG(bars, {
          title: `${net.name}: tunebook / oneDNN per convolution${
            ratios.length ? ` (PyTorch / tunebook ${median(ratios).toFixed(2)}x end to end)` : ""
          }`,
          x: "tunebook / oneDNN (GFLOP/s, each peer's best round)",
          target: 0.9,
        });
        await writePlot(v.plot, svg);
        console.error(`[network_peers] wrote ${v.plot}`);
      }
    }
    console.log(JSON.stringify({
      network: net.name,
      layout: layoutName(block),
      input: net.input.shape,
      threads,
      tunedTasks: traces.size,
      tasks: tasks.length,
      torch: torchUnavailable ? { unavailable: torchUnavailable } : { version: torchVersion },
      rounds: perRound,
      torchOverTunebook: ratios,
      matchesReference: check.matchesReference,
      ...(summary ? { convolutions: summary } : {}),
      layers: layers.map((row) => ({
        task: taskKey(row.workload),
        tunebook: row.figures.tunebook,
        onednn: row.figures.onednn,
        pairedRatio: pairedRatio(row, "tunebook", "onednn"),
      })),
    }));
  });
}
