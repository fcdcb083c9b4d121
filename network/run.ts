/**
 * Runs a whole network natively and reports its end-to-end latency (JSON on
 * stdout), optionally checking the output against the reference executor:
 *
 * ```sh
 * deno run -A network/run.ts --network resnet18 [--size 224] [--repeat 5] [--check]
 *   [--traces FILE.json] [--seed 1] [--profile] [--layout NCHW|NCHW16c]
 * ```
 *
 * `--network` is a built-in name, FILE.json or FILE.onnx (an ONNX model runs
 * with its own weights, others with random ones from `--seed`); `--traces` is
 * a JSON object of tuned traces by task key (`conv2d(1,64,56,56,64,3,3,1,1)`),
 * the other kernels use their default schedules. `--profile` adds each kernel
 * call's median time over `--repeat` passes (`profile.steps`) and their sums
 * for the tunable layers and for the rest (bias, ReLU, adds, pools, concat,
 * layout conversions). `--layout NCHW16c` runs the convolutions on channel
 * blocks (`conv2d_nchwc`; the traces are then the blocked tasks').
 * Bad arguments exit 2 with one line naming the flag or file.
 * @module
 */
import { parseArgs } from "node:util";
import { parseTrace, type Trace } from "../ir/trace.ts";
import { measureEndToEnd } from "./end_to_end.ts";
import { layoutName, parseLayout } from "./layout.ts";
import { loadNetwork } from "./load.ts";
import { NetworkError } from "./network.ts";
import { extractTasks } from "./tasks.ts";
import { randomWeights } from "./weights.ts";

class UsageError extends Error {}

function positive(flag: string, v: string | undefined, def: number): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) {
    throw new UsageError(`--${flag} must be a positive integer, got "${v}"`);
  }
  return n;
}

async function readTraces(path: string | undefined): Promise<Map<string, Trace> | undefined> {
  if (path === undefined) return undefined;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(await Deno.readTextFile(path));
  } catch (e) {
    throw new UsageError(`Cannot read --traces file "${path}": ${(e as Error).message}`);
  }
  const out = new Map<string, Trace>();
  for (const [key, t] of Object.entries(json)) {
    try {
      out.set(key, parseTrace(t));
    } catch (e) {
      throw new UsageError(`--traces file "${path}", task ${key}: ${(e as Error).message}`);
    }
  }
  return out;
}

async function main(args: string[]): Promise<void> {
  let v;
  try {
    v = parseArgs({
      args,
      options: {
        network: { type: "string" },
        size: { type: "string" },
        repeat: { type: "string" },
        seed: { type: "string" },
        traces: { type: "string" },
        check: { type: "boolean" },
        profile: { type: "boolean" },
        layout: { type: "string" },
      },
    }).values;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (!v.network) {
    throw new UsageError("Missing --network resnet18|mobilenet_v2|squeezenet1_1|FILE");
  }
  const size = positive("size", v.size, 224), repeat = positive("repeat", v.repeat, 5);
  const seed = positive("seed", v.seed, 1);
  let block = 1;
  try {
    block = parseLayout(v.layout ?? "NCHW");
  } catch (e) {
    throw new UsageError(`--layout: ${(e as Error).message}`);
  }
  const traces = await readTraces(v.traces);
  const { network, weights: given } = await loadNetwork(v.network, { size });
  const weights = given ?? randomWeights(network, seed);
  const r = await measureEndToEnd(network, weights, {
    traces,
    repeat,
    seed,
    check: v.check,
    profile: v.profile,
    block,
  });
  const tasks = extractTasks(network, block);
  const report: Record<string, unknown> = {
    network: network.name,
    input: network.input.shape,
    layers: network.layers.length,
    layout: layoutName(block),
    tasks: tasks.length,
    kernels: r.kernels,
    kernelCalls: r.kernelCalls,
    tuned: r.tuned,
    gflop: tasks.reduce((a, t) => a + t.weight * t.workload.flops, 0) / 1e9,
    compileSeconds: +r.compileSeconds.toFixed(2),
    latencyMs: +r.latencyMs.toFixed(3),
    timesMs: r.timesMs.map((t) => +t.toFixed(3)),
  };
  if (r.profile) {
    const sum = (tunable: boolean) =>
      +r.profile!.filter((s) => s.tunable === tunable).reduce((a, s) => a + s.medianMs, 0)
        .toFixed(3);
    report.profile = {
      tunableMs: sum(true),
      otherMs: sum(false),
      steps: r.profile.map((s) => ({ ...s, medianMs: +s.medianMs.toFixed(4) })),
    };
  }
  if (v.check) {
    report.maxRelativeError = r.maxRelativeError;
    report.matchesReference = r.matchesReference;
  }
  console.log(JSON.stringify(report, null, 2));
  if (v.check && !report.matchesReference) Deno.exitCode = 1;
}

if (import.meta.main) {
  try {
    await main(Deno.args);
  } catch (e) {
    if (e instanceof UsageError || e instanceof NetworkError) {
      console.error(`network/run: ${e.message}`);
      Deno.exit(2);
    }
    throw e;
  }
}
