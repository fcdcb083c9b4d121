/**
 * The network estimate against the measured network (issue 42, item 3): how
 * far the tuner's estimate (the sum over tasks of weight x best recorded
 * latency) is from a forward pass of the tuned network, and what accounts for
 * the rest, in one run:
 *
 * ```sh
 * deno run -A bench/network_estimate.ts --network resnet18 --db runs.db \
 *   [--layout NCHW16c] [--rounds 5] [--repeat 10] [--size 224] [--threads 2]
 * ```
 *
 * The network is compiled once with the best record of each task in `--db`
 * (as `tune-network` leaves them). Each round times, in turn:
 * - **measured**: the median of `--repeat` forward passes;
 * - **in a pass**: every step (kernel call) inside `--repeat` forward passes
 *   (`Executor.profile`): the cache state each step finds in a pass;
 * - **isolated**: every step by itself, `--repeat` calls back to back, as the
 *   tuner times a kernel (`Executor.isolated`);
 * - **flushed**: the same with the rest of a forward pass's data written
 *   between calls and the step's activations read again
 *   (`isolated({ cold: true })`): that cache state emulated without the rest
 *   of the network.
 *
 * The estimates, each against that round's measured pass:
 * - `tuner`: sum over tasks of weight x the record's latency (what
 *   `tune-network` reports as `estimateMs`);
 * - `+ other steps`: that plus the steps outside the tuned kernels (bias,
 *   activations, adds, pools, layout changes, the untuned layers), timed
 *   isolated;
 * - `network`: that plus, for every step, in a pass minus isolated: what the
 *   cache state between layers costs (`tune-network`'s estimate);
 * - `network, flushed`: the same with the flushed times in place of those in a pass;
 * - `re-timed`: each of the two with the tuned kernels' steps timed again now
 *   (isolated) in place of the records' figures, which a machine whose speed
 *   drifts since the tuning moves.
 *
 * The last line is JSON with every figure.
 * @module
 */
import { RecordsDB } from "../datasets/db.ts";
import { createExecutor } from "../network/executor.ts";
import { type NetworkEstimate, networkEstimate } from "../network/end_to_end.ts";
import { layoutName, parseLayout } from "../network/layout.ts";
import { sizeOf } from "../network/network.ts";
import { taskKey } from "../network/tasks.ts";
import { fillUniform } from "../measure/prng.ts";
import { warmStart } from "../tuner/task_scheduler.ts";
import { median } from "../ir/stats.ts";
import { benchNetwork, positiveFlags } from "./network_peers.ts";
import { parseFlags, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/network_estimate.ts --network resnet18 --db runs.db \\
    [--layout NCHW16c] [--rounds 5] [--repeat 10] [--size 224] [--threads 2]`;

/**
 * One round's figures, ms: the measured pass, the estimate's parts with the
 * cache state timed in a pass ({@link NetworkEstimate}), and the estimates
 * with it emulated by a flush.
 */
export interface EstimateRound extends NetworkEstimate {
  measuredMs: number;
  /** The cache state's part, flushed between isolated calls. */
  flushedCacheStateMs: number;
  /** `networkMs` with that part. */
  flushedMs: number;
  /** `retimedMs` with that part. */
  flushedRetimedMs: number;
}

if (import.meta.main) {
  await runCommand("network_estimate", async (argv) => {
    const v = parseFlags(argv, {
      network: { type: "string", default: "resnet18" },
      db: { type: "string" },
      layout: { type: "string", default: "NCHW" },
      rounds: { type: "string", default: "5" },
      repeat: { type: "string", default: "10" },
      size: { type: "string", default: "224" },
      threads: { type: "string", default: "2" },
    }, USAGE);
    const fail = (m: string): never => {
      throw new UsageError(m);
    };
    if (!v.db) fail("--db is required: a records database that tune-network wrote");
    let block = 1;
    try {
      block = parseLayout(v.layout!);
    } catch (e) {
      fail(`--layout: ${(e as Error).message}`);
    }
    const { rounds, repeat, size, threads } = positiveFlags(
      v,
      ["rounds", "repeat", "size", "threads"],
      fail,
    );
    Deno.env.set("OMP_NUM_THREADS", String(threads));
    const { net, weights, tasks, traces } = await benchNetwork(
      { network: v.network!, size, block, db: v.db! },
      fail,
    );
    const records = RecordsDB.open(v.db!, { mode: "read" });
    const starts = warmStart(records, tasks.map((t) => t.workload));
    records.close();
    const missing = tasks.filter((_, i) => starts[i].bestSeconds === undefined).map((t) =>
      taskKey(t.workload)
    );
    if (missing.length > 0) {
      fail(`${missing.length} tasks have no record in ${v.db}: ${missing[0]}, ...`);
    }
    const tunerMs = tasks.reduce((s, t, i) => s + t.weight * starts[i].bestSeconds! * 1e3, 0);
    const load = () => Deno.loadavg()[0].toFixed(2);
    console.log(
      `network_estimate: ${net.name} ${net.input.shape.join("x")}, ${
        layoutName(block)
      }, ${threads} threads; ` +
        `${traces.size} of ${tasks.length} tasks tuned in ${v.db}; ${rounds} rounds of ${repeat}; load ${load()}`,
    );
    const ex = await createExecutor(net, weights, { traces, block });
    const input = new Float32Array(sizeOf(net.input.shape));
    fillUniform(1, [input]);
    ex.run(input);
    const rows: (EstimateRound & { load: number })[] = [];
    try {
      for (let r = 1; r <= rounds; r++) {
        const measuredMs = ex.latency({ repeat, warmup: 1 }).medianMs;
        const inPass = ex.profile({ repeat, warmup: 1 });
        const hot = ex.isolated({ repeat, warmup: 1 });
        const cold = ex.isolated({ repeat, warmup: 1, cold: true });
        const flushed = networkEstimate(tunerMs, hot, cold);
        const row = {
          measuredMs: Math.round(measuredMs * 1e4) / 1e4,
          ...networkEstimate(tunerMs, hot, inPass),
          flushedCacheStateMs: flushed.coldExtraMs,
          flushedMs: flushed.networkMs,
          flushedRetimedMs: flushed.retimedMs,
          load: Deno.loadavg()[0],
        };
        rows.push(row);
        console.error(`[network_estimate] round ${r}: ${JSON.stringify(row)}`);
      }
    } finally {
      ex.close();
    }
    const ratio = (k: keyof EstimateRound) => rows.map((x) => x[k] / x.measuredMs);
    const fmt = (xs: number[]) =>
      `${median(xs).toFixed(3)} (${Math.min(...xs).toFixed(3)}-${Math.max(...xs).toFixed(3)})`;
    console.log("");
    console.log("| estimate | ms (median of rounds) | estimate / measured (median, range) |");
    console.log("| --- | --- | --- |");
    console.log(
      `| measured forward pass | ${median(rows.map((x) => x.measuredMs)).toFixed(2)} | 1 |`,
    );
    console.log(`| tuner (weight x record) | ${tunerMs.toFixed(2)} | ${fmt(ratio("tunerMs"))} |`);
    console.log(
      `| + other steps, isolated | ${
        median(rows.map((x) => x.tunerMs + x.otherStepsMs)).toFixed(2)
      } | ${fmt(rows.map((x) => (x.tunerMs + x.otherStepsMs) / x.measuredMs))} |`,
    );
    const line = (what: string, k: keyof EstimateRound) =>
      console.log(`| ${what} | ${median(rows.map((x) => x[k])).toFixed(2)} | ${fmt(ratio(k))} |`);
    line("network (+ cache state in a pass)", "networkMs");
    line("network, flushed (+ cache state flushed)", "flushedMs");
    line("tuned steps re-timed, isolated", "tunedNowMs");
    line("network, re-timed (+ cache state in a pass)", "retimedMs");
    line("network, re-timed and flushed", "flushedRetimedMs");
    console.log(
      JSON.stringify({ network: net.name, layout: layoutName(block), threads, rounds: rows }),
    );
  });
}
