/**
 * Do the tuner and the peers' harness time a kernel alike? For each matmul
 * size, one kernel (the best record of `--db`, or the best of `--tune N`
 * random trials tuned first) is timed in `--rounds` interleaved rounds, each
 * round once by the tuner's own measurement (the `cpu` target's measurer, as
 * `tune` records a candidate: built, checked against the reference, timed in a
 * worker process) and once by `bench/peers.ts`' harness (bench/peers/tunebook.c,
 * a process of its own), with the same warm-up, repeats, minimum repeat time
 * and OpenMP threads. Prints per size the median ratio tuner / harness of the
 * rounds' figures (each the median repeat) and its range, then one line of
 * JSON; a ratio within 0.95..1.05 is agreement within 5%.
 *
 * ```sh
 * deno run -A bench/harness_agreement.ts [--sizes 512,1024] [--tune 16] [--db runs.db] \
 *   [--rounds 7] [--threads 2] [--warmup 1] [--repeat 5] [--min-repeat-ms 40]
 * ```
 * @module
 */
import { join } from "node:path";
import { resolveTarget } from "../ir/target.ts";
import type { Trace } from "../ir/trace.ts";
import { createWorkload, type Workload } from "../ir/workloads.ts";
import { createBuilder } from "../measure/builder.ts";
import { kernelSource, signatureOf } from "../measure/kernel_source.ts";
import { runSession } from "../tuner/session.ts";
import { targetMeasurer } from "../tuner/target_measurer.ts";
import { bestRecorded, PeerHarnesses, roundRatios, timeHarness } from "./peers.ts";
import { parseFlags, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/harness_agreement.ts [--sizes 512,1024] [--tune 16] [--db runs.db] \\
    [--rounds 7] [--threads 2] [--warmup 1] [--repeat 5] [--min-repeat-ms 40]`;

const medianOf = (xs: readonly number[]): number | undefined => {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((p, q) => p - q);
  return s[(s.length - 1) >> 1];
};

async function kernelOf(w: Workload, db: string | undefined, tune: number): Promise<Trace> {
  if (db) {
    const best = bestRecorded(db, w);
    if (best) return best.trace;
  }
  const dir = await Deno.makeTempDir({ prefix: "tb-agree-" });
  try {
    await runSession({
      db: join(dir, "t.db"),
      workload: { name: w.name, shape: w.shape },
      strategy: "random",
      trials: tune,
    });
    const best = bestRecorded(join(dir, "t.db"), w);
    if (!best) throw new Error(`no valid kernel among ${tune} random trials of ${w.shape}`);
    return best.trace;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  await runCommand("harness_agreement", async (argv) => {
    const v = parseFlags(argv, {
      sizes: { type: "string", default: "512,1024" },
      tune: { type: "string", default: "16" },
      db: { type: "string" },
      rounds: { type: "string", default: "7" },
      threads: { type: "string", default: "2" },
      warmup: { type: "string", default: "1" },
      repeat: { type: "string", default: "5" },
      "min-repeat-ms": { type: "string", default: "40" },
    }, USAGE);
    const sizes = v.sizes.split(",").map(Number);
    const rounds = Number(v.rounds), threads = Number(v.threads);
    const tune = Number(v.tune);
    const db = v.db;
    const timing = {
      number: 1,
      warmup: Number(v.warmup),
      repeat: Number(v.repeat),
      minRepeatMs: Number(v["min-repeat-ms"]),
    };
    const bad = [...sizes, rounds, threads, tune, timing.repeat].find((x) =>
      !Number.isInteger(x) || x < 1
    );
    if (bad !== undefined) {
      throw new UsageError(
        `sizes, rounds, threads, tune and repeat must be positive integers, got ${bad}`,
      );
    }
    // The tuner's workers take their OpenMP threads from this process's environment.
    Deno.env.set("OMP_NUM_THREADS", String(threads));
    const env = { OMP_NUM_THREADS: String(threads) };
    const h = new PeerHarnesses();
    const tool = await h.harness("tunebook");
    if ("unavailable" in tool) {
      console.error(`the peers' tunebook harness is unavailable: ${tool.unavailable}`);
      Deno.exit(1);
    }
    const out = [];
    console.log(
      `| matmul | tuner GFLOP/s (median of rounds) | harness GFLOP/s | tuner / harness (median, range over ${rounds} rounds) |`,
    );
    console.log("| --- | --- | --- | --- |");
    for (const n of sizes) {
      const w = createWorkload("matmul", [n, n, n]);
      const trace = await kernelOf(w, db, tune);
      const s = kernelSource(trace);
      if (!("source" in s)) throw new Error(`matmul ${n}: the kernel has no C source`);
      const builder = createBuilder();
      const [b] = await builder.build([{ source: s.source }]);
      if (b.errorKind !== "none") {
        throw new Error(`matmul ${n}: the kernel did not build: ${b.error}`);
      }
      const sizesArg = signatureOf(w).buffers.map((x) => String(x.size));
      const tm = targetMeasurer(resolveTarget("cpu"), { workload: w, timing, builder });
      const tuner: (number | undefined)[] = [], harness: (number | undefined)[] = [];
      try {
        for (let r = 0; r < rounds; r++) {
          // Alternate which goes first, so neither always runs right after the other.
          const order = r % 2 === 0 ? ["tuner", "harness"] : ["harness", "tuner"];
          for (const who of order) {
            if (who === "tuner") {
              const [res] = await tm.measurer.measure([{ trace }]);
              tuner.push(res.errorKind === "none" ? medianOf(res.times) : undefined);
            } else {
              const f = await timeHarness(
                tool.path,
                [
                  b.artifact!,
                  ...sizesArg,
                  "--",
                  String(timing.warmup),
                  String(timing.repeat),
                  String(timing.minRepeatMs),
                ],
                w,
                env,
              );
              harness.push("seconds" in f ? f.seconds : undefined);
            }
          }
          console.error(`matmul ${n}: round ${r + 1}/${rounds}`);
        }
      } finally {
        await tm.measurer.close?.();
      }
      const ratio = roundRatios(tuner, harness);
      const g = (xs: (number | undefined)[]) => {
        const m = medianOf(xs.filter((x): x is number => x !== undefined));
        return m ? w.flops / m / 1e9 : undefined;
      };
      out.push({
        size: n,
        tuner_gflops: g(tuner),
        harness_gflops: g(harness),
        ratio,
        tuner,
        harness,
      });
      console.log(
        `| ${n} | ${g(tuner)?.toFixed(1) ?? "-"} | ${g(harness)?.toFixed(1) ?? "-"} | ${
          ratio
            ? `${ratio.median.toFixed(3)} (${ratio.min.toFixed(3)}-${ratio.max.toFixed(3)})`
            : "-"
        } |`,
      );
    }
    console.log(JSON.stringify({ threads, timing, rounds, results: out }));
  });
}
