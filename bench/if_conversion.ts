/**
 * What `-fno-tree-loop-if-convert` costs or gains: GCC's loop if-conversion
 * turns a zero-padded edge (`i < 130 ? in[i] : 0` in a loop of 136) into a
 * full-width masked load that reads past `in` (see
 * tests/_compiler_overread.ts); turning it off is one way to stop that. For
 * the last run of each records database given, this
 *
 * - compiles every candidate to assembly with the builder's default flags
 *   without the flag (which they now hold) and with it, and counts the kernels
 *   whose code changes;
 * - builds the `--best` fastest valid candidates both ways and measures them
 *   in `--rounds` rounds, the two builds alternating within each round (the
 *   machine's load drifts alike for both), and reports the median GFLOP/s
 *   of each build and their ratio.
 *
 * ```sh
 * deno run -A bench/if_conversion.ts --db mm.db --db cv.db [--best 3] [--rounds 5]
 * ```
 * Prints one line per database and kernel, then one line of JSON.
 * @module
 */
import { median } from "../ir/stats.ts";
import { RecordsDB } from "../datasets/db.ts";
import type { Trace } from "../ir/trace.ts";
import { createWorkload } from "../ir/workloads.ts";
import { createBuilder, createRunner, DEFAULT_FLAGS, type MeasureInput } from "../measure/mod.ts";
import {
  kernelSource,
  referenceSource,
  signatureOf,
  toleranceOf,
} from "../measure/kernel_source.ts";
import { parseFlags, runCommand } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/if_conversion.ts --db mm.db --db cv.db [--best 3] [--rounds 5]`;

/** The flag measured. */
export const FLAG = "-fno-tree-loop-if-convert";

/** One measured kernel: median GFLOP/s of each build. */
export interface PairFigure {
  db: string;
  trial: number;
  /** Median GFLOP/s built with GCC's default, loop if-conversion on (the flags without FLAG). */
  default_gflops: number;
  /** Median GFLOP/s built with FLAG. */
  flag_gflops: number;
  /** flag / default (medians). */
  ratio: number;
  /** Best (least disturbed) GFLOP/s of each build over all repeats. */
  default_best_gflops: number;
  flag_best_gflops: number;
  /** flag / default (bests). */
  best_ratio: number;
  /**
   * Whether the flag changes the kernel's assembly: when it does not, the
   * ratio shows only the noise of the measurement (a control).
   */
  code_changed: boolean;
}

/** Assembly of one C source with these flags (`-S`, no `-shared`), without its file and ident lines. */
async function assembly(source: string, flags: readonly string[]): Promise<string> {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/k.c`, source);
    const out = await new Deno.Command("gcc", {
      args: [...flags.filter((f) => f !== "-shared"), "-S", "-o", "-", `${dir}/k.c`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
    return new TextDecoder().decode(out.stdout).split("\n")
      .filter((l) => !/^\s*\.(file|ident)\b/.test(l)).join("\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  await runCommand("if_conversion", async (argv) => {
    const values = parseFlags(argv, {
      db: { type: "string", multiple: true },
      best: { type: "string", default: "3" },
      rounds: { type: "string", default: "5" },
      /** Measure the fastest kernels whose code the flag changes (default: the fastest). */
      changed: { type: "boolean", default: false },
    }, USAGE);
    const best = Number(values.best), rounds = Number(values.rounds);
    // The builder's default flags hold FLAG: compared with the same flags without it.
    const without = DEFAULT_FLAGS.filter((f) => f !== FLAG);
    const withFlag = [...without, FLAG];
    const cacheDir = Deno.env.get("TUNEBOOK_CACHE") ?? ".cache/kernels";
    const plain = createBuilder({ cacheDir, flags: without, parallel: 1 });
    const flagged = createBuilder({ cacheDir, flags: withFlag, parallel: 1 });
    const runner = createRunner({
      workers: 1,
      timeoutSeconds: 60,
      timing: { number: 1, repeat: 3, minRepeatMs: 40, warmup: 1 },
    });
    const figures: PairFigure[] = [];
    const changed: Record<string, { kernels: number; changed: number }> = {};
    try {
      for (const path of values.db ?? []) {
        const db = RecordsDB.open(path, { mode: "read" });
        // The last tuning run (a tune's finalists are a run of their own after it).
        const run = db.runs().findLast((r) => r.strategy !== "finalists")!;
        const wl = db.workload(run.workloadId)!;
        const workload = createWorkload(wl.name, wl.shape);
        const candidates = db.candidates(run.id);
        db.close();
        const sources = candidates.map((c) => kernelSource(JSON.parse(c.trace) as Trace));
        let n = 0, diff = 0;
        const differs: boolean[] = [];
        for (const s of sources) {
          if (!("source" in s)) {
            differs.push(false);
            continue;
          }
          n++;
          differs.push(
            await assembly(s.source, without) !== await assembly(s.source, withFlag),
          );
          if (differs.at(-1)) diff++;
        }
        changed[path] = { kernels: n, changed: diff };
        console.log(`${path}: ${diff} of ${n} kernels compile to different code with ${FLAG}`);
        const top = candidates
          .map((c, i) => ({ c, s: sources[i], changed: differs[i] }))
          .filter(({ c, s, changed }) =>
            c.result?.errorKind === "none" && "source" in s && (changed || !values.changed)
          )
          .sort((a, b) => a.c.result!.seconds! - b.c.result!.seconds!)
          .slice(0, best);
        const [ref] = await plain.build([{ source: referenceSource(workload) }]);
        const base = { reference: ref.artifact!, signature: signatureOf(workload), seed: 0 };
        const tol = toleranceOf(workload);
        for (const { c, s, changed } of top) {
          const source = (s as { source: string }).source;
          const [a] = await plain.build([{ source }]);
          const [b] = await flagged.build([{ source }]);
          const input = (r: typeof a): MeasureInput => ({
            ...base,
            ...tol,
            artifact: r.artifact!,
            ...(r.symbol ? { symbol: r.symbol } : {}),
          });
          const times: [number[], number[]] = [[], []];
          for (let round = 0; round < rounds; round++) {
            // Alternate which build goes first.
            const order = round % 2 ? [1, 0] : [0, 1];
            for (const k of order) {
              const [r] = await runner.run([input(k === 0 ? a : b)]);
              if (r.errorKind !== "none") throw new Error(`${path} trial ${c.trial}: ${r.error}`);
              times[k].push(...r.times);
            }
          }
          const g = (t: number[]) => workload.flops / median(t) / 1e9;
          const top = (t: number[]) => workload.flops / Math.min(...t) / 1e9;
          const f: PairFigure = {
            db: path,
            trial: c.trial,
            default_gflops: g(times[0]),
            flag_gflops: g(times[1]),
            ratio: g(times[1]) / g(times[0]),
            default_best_gflops: top(times[0]),
            flag_best_gflops: top(times[1]),
            best_ratio: top(times[1]) / top(times[0]),
            code_changed: changed,
          };
          figures.push(f);
          console.log(
            `${path} trial ${c.trial}: ${f.default_gflops.toFixed(1)} GFLOP/s if-converted, ${
              f.flag_gflops.toFixed(1)
            } with ${FLAG} (x${f.ratio.toFixed(3)}); best ${f.default_best_gflops.toFixed(1)} vs ${
              f.flag_best_gflops.toFixed(1)
            } (x${f.best_ratio.toFixed(3)}); code ${changed ? "changed" : "identical"}`,
          );
        }
      }
    } finally {
      await runner.close();
    }
    console.log(JSON.stringify({ changed, figures }));
  });
}
