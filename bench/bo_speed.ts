/**
 * Speed of Bayesian optimization (`bo`, search/bo.ts) on a large replayed
 * space: wall seconds for one seed to reach 400 distinct evaluations on
 * gemm_RTX_3090 (82,944 points; target under 5 s, issue 16), per seed, with
 * the fraction of optimum reached. A benchmark, not a test: the figure
 * depends on the machine and its load.
 *
 * ```sh
 * deno run --allow-read --allow-env bench/bo_speed.ts [seeds, default 5] [cache, default gemm_RTX_3090] [acquisition, default multi]
 * ```
 * @module
 */
import { fractionAt } from "../search/comparison.ts";
import { runStrategy } from "../tuner/run_strategy.ts";
import { type Acquisition, bayesianOptimization } from "../search/bo.ts";
import { replaySpaceFromFile } from "../search/replay.ts";
import { positionalArgs, positiveArg, runCommand } from "../cli/args.ts";

/** What `--help` prints. */
const USAGE = `usage:
  deno run --allow-read --allow-env bench/bo_speed.ts [seeds, default 5] [cache, default gemm_RTX_3090] [acquisition, default multi]`;

if (import.meta.main) {
  await runCommand("bo_speed", async (argv) => {
    const args = positionalArgs(argv, USAGE, 3);
    const seeds = positiveArg(args[0], "seeds", 5);
    const cache = args[1] ?? "gemm_RTX_3090";
    const acquisition = (args[2] ?? "multi") as Acquisition;
    const r = await replaySpaceFromFile(cache);
    console.log(`${r.name}: ${r.space.size} points, bo (${acquisition}) to 400 evaluations`);
    const times: number[] = [];
    for (let seed = 0; seed < seeds; seed++) {
      const s = bayesianOptimization(r.space, { seed, acquisition });
      const t0 = performance.now();
      const run = await runStrategy(s, (cs) => r.measure(cs), { budget: 400 });
      const secs = (performance.now() - t0) / 1000;
      times.push(secs);
      console.log(
        `seed ${seed}: ${secs.toFixed(2)} s, ${run.evals} evaluations, fraction of optimum ${
          fractionAt(run, 400, r.optimum).toFixed(3)
        }`,
      );
    }
    const sorted = [...times].sort((a, b) => a - b);
    console.log(
      `median ${sorted[Math.floor(sorted.length / 2)].toFixed(2)} s, max ${
        sorted.at(-1)!.toFixed(2)
      } s per seed (target: under 5 s)`,
    );
  });
}
