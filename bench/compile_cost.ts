/**
 * What predicts gcc's time on a kernel: random search's candidates compiled
 * one at a time, each timed, against their source length and their
 * `compileCost` (measure/builder.ts: the length with each line counted as
 * often as its loops' `GCC unroll` pragmas unroll it). Prints both
 * correlations, the slowest kernels, and what dealing each round of `--batch`
 * kernels to `--compilers` compilers by each predictor would give (a round's
 * wall: its slowest group, each group the sum of its kernels alone).
 *
 * ```sh
 * deno run -A bench/compile_cost.ts [--shape 256,256,256] [--rounds 12] [--batch 8] \
 *   [--compilers 2] [--seed 1]
 * ```
 *
 * Results: bench/results/tuning_throughput.md, "Dealt by unrolled size".
 * @module
 */
import { createWorkload } from "../ir/workloads.ts";
import { randomSearch } from "../search/random.ts";
import { defaultSpace } from "../search/sketch.ts";
import { kernelSource } from "../measure/kernel_source.ts";
import { balancedGroups, compileCost, createBuilder } from "../measure/builder.ts";
import { positiveFlags } from "./network_peers.ts";
import { parseFlags, runCommand, UsageError } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/compile_cost.ts [--shape 256,256,256] [--rounds 12] [--batch 8] \\
    [--compilers 2] [--seed 1]`;

/** One kernel: its round, length, cost and gcc's milliseconds alone. */
export interface KernelCompile {
  round: number;
  length: number;
  cost: number;
  ms: number;
}

/**
 * Pearson correlation of two lists of equal length.
 *
 * @example
 * ```ts
 * import { correlation } from "./compile_cost.ts";
 * if (Math.abs(correlation([1, 2, 3], [2, 4, 6]) - 1) > 1e-12) throw new Error();
 * ```
 */
export function correlation(xs: readonly number[], ys: readonly number[]): number {
  const mean = (v: readonly number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  const mx = mean(xs), my = mean(ys);
  let sxy = 0, sxx = 0, syy = 0;
  xs.forEach((x, i) => {
    sxy += (x - mx) * (ys[i] - my);
    sxx += (x - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  });
  return sxy / Math.sqrt(sxx * syy);
}

/**
 * The sum over rounds of each round's wall when its kernels are dealt to
 * `compilers` groups by `by` (`balancedGroups`), a group taking the sum of
 * its kernels' times alone.
 *
 * @example
 * ```ts
 * import { dealtWall } from "./compile_cost.ts";
 * const ks = [9, 1, 1, 1].map((ms) => ({ round: 0, length: 10 - ms, cost: ms, ms }));
 * if (dealtWall(ks, 2, 8, (k) => k.cost) !== 9) throw new Error();
 * if (dealtWall(ks, 2, 8, (k) => k.length) !== 10) throw new Error();
 * ```
 */
export function dealtWall(
  kernels: readonly KernelCompile[],
  compilers: number,
  batch: number,
  by: (k: KernelCompile) => number,
): number {
  let total = 0;
  for (const round of new Set(kernels.map((k) => k.round))) {
    const groups = balancedGroups(kernels.filter((k) => k.round === round), compilers, batch, by);
    total += Math.max(...groups.map((g) => g.reduce((a, k) => a + k.ms, 0)));
  }
  return total;
}

if (import.meta.main) {
  await runCommand("compile_cost", async (argv) => {
    const v = parseFlags(argv, {
      shape: { type: "string", default: "256,256,256" },
      rounds: { type: "string", default: "12" },
      batch: { type: "string", default: "8" },
      compilers: { type: "string", default: "2" },
      seed: { type: "string", default: "1" },
    }, USAGE);
    const fail = (m: string): never => {
      throw new UsageError(m);
    };
    const { rounds, batch, compilers } = positiveFlags(v, ["rounds", "batch", "compilers"], fail);
    const seed = Number(v.seed);
    const w = (() => {
      try {
        return createWorkload("matmul", v.shape!.split(",").map(Number));
      } catch (e) {
        return fail(`--shape: ${(e as Error).message}`);
      }
    })();
    const search = randomSearch(defaultSpace(w), { seed });
    const dir = await Deno.makeTempDir({ prefix: "compile_cost_" });
    const builder = createBuilder({ cacheDir: dir, batch: 1, parallel: 1 });
    const kernels: KernelCompile[] = [];
    try {
      for (let round = 0; round < rounds; round++) {
        for (const c of search.propose(batch)) {
          const k = kernelSource(c.trace!);
          if ("error" in k) continue; // a trace that does not lower: nothing to compile
          const source = k.source;
          const [r] = await builder.build([{ source }]);
          if (r.errorKind !== "none") continue;
          kernels.push({
            round,
            length: source.length,
            cost: compileCost(source),
            ms: r.buildSeconds * 1000,
          });
        }
        console.error(`round ${round + 1}/${rounds}`);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
    const ms = kernels.map((k) => k.ms);
    console.log(
      `matmul ${v.shape}, ${kernels.length} random kernels (seed ${seed}), gcc alone, ` +
        `total ${(ms.reduce((a, b) => a + b, 0) / 1000).toFixed(2)} s`,
    );
    console.log(
      `correlation with gcc's time: length ${
        correlation(kernels.map((k) => k.length), ms).toFixed(3)
      }, compileCost ${correlation(kernels.map((k) => k.cost), ms).toFixed(3)}`,
    );
    const wall = (by: (k: KernelCompile) => number) =>
      (dealtWall(kernels, compilers, batch, by) / 1000).toFixed(2);
    console.log(
      `rounds dealt to ${compilers} compilers, sum of walls: by length ${
        wall((k) => k.length)
      } s, ` +
        `by compileCost ${wall((k) => k.cost)} s, by the true times ${wall((k) => k.ms)} s`,
    );
    console.log("slowest:");
    for (const k of [...kernels].sort((a, b) => b.ms - a.ms).slice(0, 5)) {
      console.log(
        `  ${k.ms.toFixed(0)} ms: ${(k.length / 1000).toFixed(1)} KB, compileCost ${k.cost}`,
      );
    }
  });
}
