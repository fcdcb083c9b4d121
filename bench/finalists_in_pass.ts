/**
 * Finalists timed inside the network (issue 42, items 3 and 4): whether a
 * task's finalists, ranked by themselves as the tuner times them, rank the
 * same inside forward passes, where a step finds its weights wherever the
 * rest of the pass left them, and what the network gains from choosing each
 * task's kernel by its time in a pass:
 *
 * ```sh
 * deno run -A bench/finalists_in_pass.ts --network resnet18 --db runs.db \
 *   [--layout NCHW16c] [--finalists 4] [--rounds 5] [--repeat 10] [--size 224] [--threads 2]
 * ```
 *
 * Each task's candidates are the kernel `tune-network` left it (its best
 * record, or its re-timed finalists' fastest) and the next fastest distinct
 * traces recorded for its workload, up to `--finalists` in all. Candidate
 * slot `k` is one network compiled with every task's `k`-th candidate (its
 * first where it has fewer), so `--finalists` networks time every candidate
 * of every task at once. Each round times, for every slot in turn, each step
 * inside `--repeat` forward passes (`Executor.profile`) and by itself
 * (`Executor.isolated`); a task's time is the sum of its steps' medians (a
 * task that several layers run counts each). A task's choice in a pass is
 * the candidate with the lowest median over the rounds.
 *
 * Then the network with those choices and the network as recorded are
 * timed in turn, `--rounds` times (`--repeat` passes each, the median kept):
 * recorded / chosen, round by round, is what the choice gains; both outputs
 * are compared. The last line is JSON with every figure.
 * @module
 */
import { RecordsDB } from "../datasets/db.ts";
import { canonicalJSON, parseTrace, type Trace } from "../ir/trace.ts";
import { median } from "../ir/stats.ts";
import { fillUniform } from "../measure/prng.ts";
import { createExecutor, type Executor, type StepTime } from "../network/executor.ts";
import { layoutName, parseLayout } from "../network/layout.ts";
import { sizeOf } from "../network/network.ts";
import { taskKey } from "../network/tasks.ts";
import { finalistsOf } from "../tuner/finalists.ts";
import { benchNetwork, positiveFlags } from "./network_peers.ts";
import { parseFlags, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/finalists_in_pass.ts --network resnet18 --db runs.db \\
    [--layout NCHW16c] [--finalists 4] [--rounds 5] [--repeat 10] [--size 224] [--threads 2]`;

/** One task's candidates and what each took, ms (medians over the rounds). */
export interface TaskInPass {
  /** The task (`taskKey`). */
  task: string;
  /** Layers that run it. */
  weight: number;
  /** Per candidate: inside forward passes and by itself, summed over the task's steps. */
  candidates: { inPassMs: number; isolatedMs: number }[];
  /** Index of the candidate fastest in a pass (0: the recorded kernel). */
  chosen: number;
  /** Index of the candidate fastest by itself. */
  fastestIsolated: number;
}

/**
 * The summed time of the steps of task `key` in a profile or isolated
 * timing (ms), or NaN when none ran it.
 *
 * @example
 * ```ts
 * import { taskMs } from "./finalists_in_pass.ts";
 * const step = (kernel: string, medianMs: number) =>
 *   ({ layer: "l", kernel, tunable: true, medianMs });
 * if (taskMs([step("a", 1), step("b", 2), step("a", 3)], "a") !== 4) throw new Error();
 * ```
 */
export function taskMs(steps: readonly StepTime[], key: string): number {
  const own = steps.filter((s) => s.tunable && s.kernel === key);
  return own.length === 0 ? NaN : own.reduce((a, s) => a + s.medianMs, 0);
}

if (import.meta.main) {
  await runCommand("finalists_in_pass", async (argv) => {
    const v = parseFlags(argv, {
      network: { type: "string", default: "resnet18" },
      db: { type: "string" },
      layout: { type: "string", default: "NCHW" },
      finalists: { type: "string", default: "4" },
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
    const { finalists: top, rounds, repeat, size, threads } = positiveFlags(
      v,
      ["finalists", "rounds", "repeat", "size", "threads"],
      fail,
    );
    Deno.env.set("OMP_NUM_THREADS", String(threads));
    const { net, weights, tasks, traces: recorded } = await benchNetwork(
      { network: v.network!, size, block, db: v.db! },
      fail,
    );
    if (recorded.size === 0) fail(`no task of ${net.name} has a record in ${v.db}`);
    // Each task's candidates: the recorded kernel first, then the next fastest distinct traces.
    const records = RecordsDB.open(v.db!, { mode: "read" });
    const candidates = new Map<string, Trace[]>();
    try {
      for (const t of tasks) {
        const key = taskKey(t.workload);
        const first = recorded.get(key);
        if (!first) continue;
        const seen = new Set([canonicalJSON(first)]);
        const list = [first];
        for (const f of finalistsOf(records, t.workload, top + 1)) {
          const trace = parseTrace(JSON.parse(f.trace));
          const c = canonicalJSON(trace);
          if (list.length >= top || seen.has(c)) continue;
          seen.add(c);
          list.push(trace);
        }
        candidates.set(key, list);
      }
    } finally {
      records.close();
    }
    const slots = Math.max(...[...candidates.values()].map((l) => l.length));
    console.log(
      `finalists_in_pass: ${net.name} ${net.input.shape.join("x")}, ${layoutName(block)}, ` +
        `${threads} threads; ${candidates.size} of ${tasks.length} tasks tuned in ${v.db}, ` +
        `up to ${slots} candidates each; ${rounds} rounds of ${repeat}; load ${
          Deno.loadavg()[0].toFixed(2)
        }`,
    );
    const input = new Float32Array(sizeOf(net.input.shape));
    fillUniform(1, [input]);
    const tracesOf = (pick: (key: string, list: Trace[]) => Trace) =>
      new Map([...candidates].map(([key, list]) => [key, pick(key, list)] as const));
    const executors: Executor[] = [];
    try {
      for (let k = 0; k < slots; k++) {
        console.error(`[finalists_in_pass] compiling candidate slot ${k + 1} of ${slots}`);
        const ex = await createExecutor(net, weights, {
          traces: tracesOf((_, list) => list[Math.min(k, list.length - 1)]),
          block,
        });
        executors.push(ex);
        ex.run(input);
      }
      // times[key][k]: the task's in-pass and isolated ms in each round.
      const times = new Map(
        [...candidates].map(([key, list]) => [
          key,
          list.map(() => ({ inPass: [] as number[], isolated: [] as number[] })),
        ]),
      );
      for (let r = 1; r <= rounds; r++) {
        for (const [k, ex] of executors.entries()) {
          const inPass = ex.profile({ repeat, warmup: 1 });
          const isolated = ex.isolated({ repeat, warmup: 1 });
          for (const [key, list] of candidates) {
            if (k >= list.length) continue;
            times.get(key)![k].inPass.push(taskMs(inPass, key));
            times.get(key)![k].isolated.push(taskMs(isolated, key));
          }
        }
        console.error(`[finalists_in_pass] round ${r} of ${rounds} timed`);
      }
      const rows: TaskInPass[] = tasks.flatMap((t) => {
        const key = taskKey(t.workload);
        const per = times.get(key);
        if (!per) return [];
        const c = per.map((x) => ({ inPassMs: median(x.inPass), isolatedMs: median(x.isolated) }));
        const argmin = (f: (x: typeof c[number]) => number) =>
          c.reduce((b, x, i) => (f(x) < f(c[b]) ? i : b), 0);
        return [{
          task: key,
          weight: t.weight,
          candidates: c,
          chosen: argmin((x) => x.inPassMs),
          fastestIsolated: argmin((x) => x.isolatedMs),
        }];
      });
      const chosenOf = new Map(rows.map((r) => [r.task, r.chosen]));
      const chosen = await createExecutor(net, weights, {
        traces: tracesOf((key, list) => list[chosenOf.get(key) ?? 0]),
        block,
      });
      executors.push(chosen);
      const asRecorded = executors[0];
      const a = asRecorded.run(input), b = chosen.run(input);
      let maxError = 0;
      for (let i = 0; i < a.length; i++) {
        maxError = Math.max(maxError, Math.abs(a[i] - b[i]) / Math.max(1e-3, Math.abs(a[i])));
      }
      const passes: { recordedMs: number; chosenMs: number }[] = [];
      for (let r = 1; r <= rounds; r++) {
        passes.push({
          recordedMs: asRecorded.latency({ repeat, warmup: 1 }).medianMs,
          chosenMs: chosen.latency({ repeat, warmup: 1 }).medianMs,
        });
      }
      const f2 = (x: number) => x.toFixed(3);
      console.log("");
      console.log(
        "| task | weight | candidate | in a pass (ms) | by itself (ms) | in a pass / by itself |",
      );
      console.log("| --- | --- | --- | --- | --- | --- |");
      for (const r of rows) {
        r.candidates.forEach((c, k) => {
          const marks = [
            k === 0 ? "recorded" : "",
            k === r.chosen ? "**chosen in a pass**" : "",
            k === r.fastestIsolated ? "fastest by itself" : "",
          ].filter(Boolean).join(", ");
          console.log(
            `| ${k === 0 ? r.task : ""} | ${k === 0 ? r.weight : ""} | ${k + 1}${
              marks ? ` (${marks})` : ""
            } | ${f2(c.inPassMs)} | ${f2(c.isolatedMs)} | ${
              (c.inPassMs / c.isolatedMs).toFixed(2)
            } |`,
          );
        });
      }
      const ratios = passes.map((p) => p.recordedMs / p.chosenMs);
      const changed = rows.filter((r) => r.chosen !== 0).length;
      console.log("");
      console.log(
        `chosen in a pass: ${changed} of ${rows.length} tasks changed; forward pass as recorded ${
          f2(median(passes.map((p) => p.recordedMs)))
        } ms, as chosen ${f2(median(passes.map((p) => p.chosenMs)))} ms; recorded / chosen, ` +
          `round by round: median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}-${
            Math.max(...ratios).toFixed(3)
          }); outputs within ${maxError.toExponential(1)}`,
      );
      console.log(JSON.stringify({
        network: net.name,
        layout: layoutName(block),
        threads,
        rounds,
        repeat,
        tasks: rows,
        passes,
        maxRelativeError: maxError,
      }));
    } finally {
      for (const ex of executors) ex.close();
    }
  });
}
