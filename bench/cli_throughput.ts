/**
 * Trials per second of the commands a researcher runs, at two checkouts of
 * tunebook (say the commit before a change and the one after), and the
 * final speed of what each reported, timed again side by side.
 *
 * ```sh
 * git worktree add /tmp/before COMMIT
 * deno run -A bench/cli_throughput.ts --before /tmp/before --after . [--shape 256,256,256] \
 *   [--trials 100] [--strategies random,xgb] [--rounds 2] [--retime-rounds 5] \
 *   [--network resnet18 --network-trials 400 --network-rounds 5]   # --strategies none: network only
 * ```
 *
 * Matmul: each round runs `cli/tune.ts --workload matmul --shape S --strategy X
 * --trials N --seed R` in each checkout with its own defaults (timing,
 * unity, finalists), before and after in turn (the order swapped every
 * round), each from an empty kernel cache and records database. Its trials
 * per second are the trials over the tuning's wall seconds read from its
 * records: from the run's creation to its last result (the finalists'
 * re-timing, which has a run of its own, is not tuning). The kernel each
 * run reported (its summary's `best_trace_id`) is then timed again, all of
 * them together by the after checkout's `tune --trace` with `--finalists`:
 * `--retime-rounds` rounds, every kernel once a round at 40 ms a repeat, so
 * the two sides' final speeds are measured alike.
 *
 * Network (`--network`): `cli/tune_network.ts --network NET --trials T
 * --strategy xgb --template conv2d-blocked,matmul-packed --layout NCHW16c
 * --no-execute` in each checkout; trials per second as above over every
 * task's run; then both tuned networks (each task's recorded best) are
 * compiled here and timed in `--network-rounds` rounds of 10 passes each, in
 * turn, and their ratio taken round by round.
 *
 * Results: bench/results/tuning_throughput.md.
 * @module
 */
import { join, resolve } from "node:path";
import { RecordsDB } from "../datasets/db.ts";
import { canonicalJSON } from "../ir/trace.ts";
import { median } from "../ir/stats.ts";
import { FINALISTS_STRATEGY } from "../tuner/finalists.ts";
import { benchNetwork, executorRounds, positiveFlags, recordedTraces } from "./network_peers.ts";
import { parseFlags, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  git worktree add /tmp/before COMMIT
  deno run -A bench/cli_throughput.ts --before /tmp/before --after . [--shape 256,256,256] \\
    [--trials 100] [--strategies random,xgb] [--rounds 2] [--retime-rounds 5] \\
    [--network resnet18 --network-trials 400 --network-rounds 5]   # --strategies none: network only`;

/** The tuning part of a records database: its trials and their wall seconds. */
export interface TuningTime {
  trials: number;
  seconds: number;
}

/**
 * Trials and tuning wall seconds of the records database at `path`: every
 * run but the finalists' re-timings, from the first such run's creation to
 * the last result of any of them.
 *
 * @example
 * ```ts ignore
 * import { tuningTime } from "./cli_throughput.ts";
 * const t = tuningTime("runs.db");
 * console.log(t.trials / t.seconds, "trials/s");
 * ```
 */
export function tuningTime(path: string): TuningTime {
  return readRecords(path, (db) => {
    const runs = db.runs().filter((r) => r.strategy !== FINALISTS_STRATEGY)
      .map((run) => ({ run, results: db.candidates(run.id).flatMap((c) => c.result ?? []) }))
      .filter((r) => r.results.length > 0);
    if (runs.length === 0) return { trials: 0, seconds: NaN };
    const start = Math.min(...runs.map((r) => Date.parse(r.run.created)));
    const last = Math.max(...runs.flatMap((r) => r.results.map((x) => Date.parse(x.timestamp))));
    return {
      trials: runs.reduce((n, r) => n + r.results.length, 0),
      seconds: (last - start) / 1000,
    };
  });
}

/** Reads the records database at `path` (either checkout's: its schema may be older). */
function readRecords<T>(path: string, read: (db: RecordsDB) => T): T {
  const db = RecordsDB.open(path, { mode: "read" });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** A trace's key: its canonical JSON, the same whichever run stored it. */
const traceKey = (stored: string) => canonicalJSON(JSON.parse(stored));

/** The trace key of candidate `id` (a summary's `best_trace_id`) in the records database at `path`. */
function traceOfCandidate(path: string, id: number): string {
  return readRecords(path, (db) => {
    const c = db.runs().flatMap((r) => db.candidates(r.id)).find((x) => x.id === id);
    if (!c) throw new Error(`${path}: no candidate ${id}`);
    return traceKey(c.trace);
  });
}

/**
 * The median over rounds of each finalist of the last finalists run in the
 * records database at `path`, seconds by trace key.
 */
function retimedSeconds(path: string): Map<string, number> {
  return readRecords(path, (db) => {
    const run = db.runs().filter((r) => r.strategy === FINALISTS_STRATEGY).at(-1);
    return new Map(
      (run ? db.candidates(run.id) : []).flatMap((c) =>
        c.result?.errorKind === "none" && c.result.seconds !== null
          ? [[traceKey(c.trace), c.result.seconds]]
          : []
      ),
    );
  });
}

/** Runs `deno run -A SCRIPT ARGS` in `cwd`; its stdout, or a thrown error with its stderr's end. */
async function deno(cwd: string, script: string, args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    cwd,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-3).join(" | ");
    throw new Error(`${script} in ${cwd} exited ${out.code}: ${err}`);
  }
  return text;
}

const fail = (m: string): never => {
  throw new UsageError(m);
};

/** One tuning run of one side. */
interface Arm {
  side: "before" | "after";
  strategy: string;
  round: number;
  trials: number;
  seconds: number;
  reportedGflops: number;
  trace: string;
  retimedGflops?: number;
}

if (import.meta.main) {
  await runCommand("cli_throughput", async (argv) => {
    const v = parseFlags(argv, {
      before: { type: "string" },
      after: { type: "string" },
      shape: { type: "string", default: "256,256,256" },
      trials: { type: "string", default: "100" },
      strategies: { type: "string", default: "random,xgb" },
      rounds: { type: "string", default: "2" },
      "retime-rounds": { type: "string", default: "5" },
      network: { type: "string" },
      "network-trials": { type: "string", default: "400" },
      "network-rounds": { type: "string", default: "5" },
      out: { type: "string" },
    }, USAGE);
    if (!v.before || !v.after) fail("--before DIR and --after DIR are required (two checkouts)");
    for (const dir of [v.before!, v.after!]) {
      try {
        Deno.statSync(join(dir, "cli", "tune.ts"));
      } catch {
        fail(`${dir} is not a tunebook checkout (no cli/tune.ts)`);
      }
    }
    const n = positiveFlags(
      v,
      ["trials", "rounds", "retime-rounds", "network-trials", "network-rounds"],
      fail,
    );
    const { trials, rounds } = n, retimeRounds = n["retime-rounds"];
    const dirs = { before: resolve(v.before!), after: resolve(v.after!) };
    const work = v.out ?? await Deno.makeTempDir({ prefix: "cli_throughput_" });
    const shape = v.shape!;
    // `--strategies none`: the network alone.
    const strategies = v.strategies === "none" ? [] : v.strategies!.split(",").filter((s) => s);
    const arms: Arm[] = [];
    const load = () => Deno.loadavg()[0].toFixed(2);
    console.log(
      `# cli_throughput: ${
        strategies.length ? `matmul ${shape}, ${trials} trials, ${rounds} round(s)` : "no matmul"
      }${v.network ? `; ${v.network}, ${v["network-trials"]} trials` : ""}; ${work}`,
    );
    for (let round = 1; round <= rounds; round++) {
      for (const strategy of strategies) {
        const sides = round % 2 ? ["before", "after"] as const : ["after", "before"] as const;
        for (const side of sides) {
          const dir = join(work, `${side}-${strategy}-${round}`);
          await Deno.mkdir(dir, { recursive: true });
          const db = join(dir, "r.db");
          const at = load();
          const summary = JSON.parse(
            await deno(dirs[side], "cli/tune.ts", [
              "--workload",
              "matmul",
              "--shape",
              shape,
              "--strategy",
              strategy,
              "--trials",
              String(trials),
              "--seed",
              String(round),
              "--db",
              db,
              "--quiet",
            ], { TUNEBOOK_CACHE: join(dir, "cache") }),
          );
          const t = tuningTime(db);
          const arm: Arm = {
            side,
            strategy,
            round,
            trials: t.trials,
            seconds: t.seconds,
            reportedGflops: summary.best_gflops,
            trace: traceOfCandidate(db, summary.best_trace_id),
          };
          arms.push(arm);
          console.log(
            `${side} ${strategy} round ${round}: ${(t.trials / t.seconds).toFixed(2)} trials/s ` +
              `(${t.trials} in ${t.seconds.toFixed(1)} s, load ${at}), reported ` +
              `${arm.reportedGflops.toFixed(1)} GFLOP/s`,
          );
        }
      }
    }
    if (arms.length > 0) {
      // Every reported kernel timed again together, at the after checkout's finalist timing.
      const traces = [...new Set(arms.map((a) => a.trace))];
      const file = join(work, "reported.json");
      await Deno.writeTextFile(file, JSON.stringify(traces.map((t) => JSON.parse(t))));
      const db = join(work, "retimed.db");
      await deno(dirs.after, "cli/tune.ts", [
        "--workload",
        "matmul",
        "--shape",
        shape,
        "--trace",
        file,
        "--finalists",
        String(traces.length),
        "--finalist-rounds",
        String(retimeRounds),
        "--db",
        db,
        "--quiet",
      ], { TUNEBOOK_CACHE: join(work, "retime-cache") });
      const seconds = retimedSeconds(db);
      const [m, n, k] = shape.split(",").map(Number);
      for (const a of arms) {
        const s = seconds.get(a.trace);
        if (s) a.retimedGflops = 2 * m * n * k / s / 1e9;
      }
      console.log(
        "\n| strategy | round | side | trials/s | tuning s | reported GFLOP/s | re-timed GFLOP/s |",
      );
      console.log("| --- | --- | --- | --- | --- | --- | --- |");
      for (const a of arms) {
        console.log(
          `| ${a.strategy} | ${a.round} | ${a.side} | ${(a.trials / a.seconds).toFixed(2)} | ${
            a.seconds.toFixed(1)
          } | ${a.reportedGflops.toFixed(1)} | ${a.retimedGflops?.toFixed(1) ?? "n/a"} |`,
        );
      }
      console.log(
        "\n| strategy | trials/s, after / before, per round | re-timed, after / before |",
      );
      console.log("| --- | --- | --- |");
      for (const strategy of strategies) {
        const pairs = Array.from({ length: rounds }, (_, i) => {
          const of = (side: string) =>
            arms.find((a) => a.strategy === strategy && a.round === i + 1 && a.side === side)!;
          const b = of("before"), a = of("after");
          return {
            speed: (a.trials / a.seconds) / (b.trials / b.seconds),
            final: (a.retimedGflops ?? NaN) / (b.retimedGflops ?? NaN),
          };
        });
        const f = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(", ");
        console.log(
          `| ${strategy} | x${median(pairs.map((p) => p.speed)).toFixed(2)} (${
            f(pairs.map((p) => p.speed))
          }) | ${median(pairs.map((p) => p.final)).toFixed(3)} (${f(pairs.map((p) => p.final))}) |`,
        );
      }
    }
    if (v.network) {
      // A network file is read from the checkouts too: its path made absolute.
      let network = v.network;
      try {
        if (Deno.statSync(network).isFile) network = resolve(network);
      } catch { /* a built-in name */ }
      const netTrials = n["network-trials"], netRounds = n["network-rounds"];
      const times: Record<string, TuningTime> = {};
      for (const side of ["before", "after"] as const) {
        const dir = join(work, `${side}-${v.network}`);
        await Deno.mkdir(dir, { recursive: true });
        const at = load();
        await deno(dirs[side], "cli/tune_network.ts", [
          "--network",
          network,
          "--trials",
          String(netTrials),
          "--strategy",
          "xgb",
          "--template",
          "conv2d-blocked,matmul-packed",
          "--layout",
          "NCHW16c",
          "--no-execute",
          "--db",
          join(dir, "net.db"),
          "--quiet",
        ], { TUNEBOOK_CACHE: join(dir, "cache") });
        times[side] = tuningTime(join(dir, "net.db"));
        const t = times[side];
        console.log(
          `${side} tune-network ${v.network}: ${(t.trials / t.seconds).toFixed(2)} trials/s ` +
            `(${t.trials} in ${t.seconds.toFixed(1)} s, load ${at})`,
        );
      }
      const { net, weights } = await benchNetwork(
        { network, size: 224, block: 16 },
        fail,
      );
      const executors = [];
      for (const side of ["before", "after"]) {
        const traces = recordedTraces(join(work, `${side}-${v.network}`, "net.db"), net, 16);
        executors.push(await executorRounds(net, weights, traces, 16));
      }
      const ms: number[][] = [[], []];
      for (let r = 0; r < netRounds; r++) {
        for (const i of r % 2 ? [1, 0] : [0, 1]) ms[i].push(executors[i].time(10));
      }
      for (const ex of executors) ex.close();
      const ratios = ms[0].map((b, i) => b / ms[1][i]);
      const speed = (times.after.trials / times.after.seconds) /
        (times.before.trials / times.before.seconds);
      console.log(
        `\n${v.network}: trials/s after / before x${
          speed.toFixed(2)
        }; network pass before / after ` +
          `${median(ratios).toFixed(3)} (${
            ratios.map((x) => x.toFixed(3)).join(", ")
          }; ms before ` +
          `${Math.min(...ms[0]).toFixed(2)}, after ${Math.min(...ms[1]).toFixed(2)})`,
      );
    }
  });
}
