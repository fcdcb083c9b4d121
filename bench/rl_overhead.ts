/**
 * Agent work per trial of the RL strategies: the time spent in `propose`
 * and `observe` (acting, learning, free steps on measured configurations;
 * evaluation excluded) divided by the distinct configurations measured, on
 * a replayed space with the default network sizes (2 x 64). Target: under
 * 5 ms per trial. A short warm-up run per strategy comes first, so one-time
 * costs (tfjs kernel setup, JIT) are not counted. Wall time and the
 * process's CPU time (user + system, which excludes waiting for a core on a
 * shared machine) are both reported.
 *
 * ```sh
 * deno run --allow-read --allow-env bench/rl_overhead.ts [budget, default 400] [seeds, default 3] [space, default gemm_RTX_3090]
 * ```
 * @module
 */
import process from "node:process";
import { runStrategy } from "../tuner/run_strategy.ts";
import { openSpace } from "../tuner/open_space.ts";
import { compareStrategies } from "../tuner/compare_strategies.ts";
import type { Strategy } from "../search/strategy.ts";
import { RL_STRATEGY_NAMES, rlStrategy } from "../rl/presets.ts";
import { positionalArgs, positiveArg, runCommand } from "../cli/args.ts";

/** What `--help` prints. */
const USAGE = `usage:
  deno run --allow-read --allow-env bench/rl_overhead.ts [budget, default 400] [seeds, default 3] [space, default gemm_RTX_3090]`;

/** One row of the overhead table. */
export interface OverheadRow {
  strategy: string;
  /** Distinct configurations measured, over all seeds. */
  trials: number;
  /** Mean agent milliseconds (wall) per trial. */
  msPerTrial: number;
  /** Mean agent milliseconds of CPU time (user + system, all threads) per trial. */
  cpuMsPerTrial: number;
  /** Largest per-seed mean. */
  worstSeedMs: number;
}

/** Options of {@link rlOverhead}. */
export interface OverheadOptions {
  /** Cache name or path. Default `"gemm_RTX_3090"`. */
  space?: string;
  /** Strategies. Default every RL strategy. */
  strategies?: readonly string[];
  /** Distinct trials per run. Default 400. */
  budget?: number;
  /** Runs (seeds 0..seeds-1) per strategy. Default 3. */
  seeds?: number;
  /** Trials of the warm-up run. Default 20. */
  warmup?: number;
}

/** Times the RL strategies' propose and observe per distinct trial. */
export async function rlOverhead(o: OverheadOptions = {}): Promise<OverheadRow[]> {
  const r = await openSpace(o.space ?? "gemm_RTX_3090");
  const rows: OverheadRow[] = [];
  const seeds = o.seeds ?? 3;
  for (const name of o.strategies ?? RL_STRATEGY_NAMES) {
    const warm = rlStrategy(name, r.space, { seed: 1000 });
    await runStrategy(warm, r.measurer, { budget: o.warmup ?? 20 });
    warm.dispose();
    // One timer per seed's run: the strategy is wrapped as it is made, and disposed after its run.
    const timers = new Map<number, { ms: number; cpu: number }>();
    const c = await compareStrategies(r, [{
      name,
      create: (space, { seed }) => {
        const timer = { ms: 0, cpu: 0 };
        timers.set(seed, timer);
        const s = rlStrategy(name, space, { seed });
        return { ...timed(s, timer), dispose: () => s.dispose() } as Strategy;
      },
    }], { budgets: [o.budget ?? 400], seeds });
    let trials = 0, ms = 0, worst = 0, cpu = 0;
    c.traces.get(name)!.forEach((run, seed) => {
      const timer = timers.get(seed)!;
      trials += run.evals;
      ms += timer.ms;
      cpu += timer.cpu;
      worst = Math.max(worst, timer.ms / Math.max(1, run.evals));
    });
    rows.push({
      strategy: name,
      trials,
      msPerTrial: ms / Math.max(1, trials),
      cpuMsPerTrial: cpu / Math.max(1, trials),
      worstSeedMs: worst,
    });
  }
  return rows;
}

/**
 * The strategy with its propose and observe wall and CPU time (ms) added to
 * `timer`; an asynchronous observe is timed until it settles.
 *
 * @example
 * ```ts
 * import { timed } from "./rl_overhead.ts";
 * const timer = { ms: 0, cpu: 0 };
 * const s = timed({ name: "none", propose: () => [], observe: () => {} }, timer);
 * s.propose(1);
 * if (!(timer.ms >= 0 && timer.cpu >= 0)) throw new Error();
 * ```
 */
export function timed(s: Strategy, timer: { ms: number; cpu: number }): Strategy {
  const clock = () => {
    const c = process.cpuUsage();
    return { wall: performance.now(), cpu: (c.user + c.system) / 1000 };
  };
  const add = (t0: { wall: number; cpu: number }) => {
    const t1 = clock();
    timer.ms += t1.wall - t0.wall;
    timer.cpu += t1.cpu - t0.cpu;
  };
  return {
    name: s.name,
    propose(n) {
      const t0 = clock();
      const out = s.propose(n);
      add(t0);
      return out;
    },
    observe(obs) {
      const t0 = clock();
      const done = s.observe(obs);
      if (done instanceof Promise) return done.then(() => add(t0));
      add(t0);
    },
  };
}

if (import.meta.main) {
  await runCommand("rl_overhead", async (argv) => {
    const args = positionalArgs(argv, USAGE, 3);
    const [budget, seeds, space] = args;
    const rows = await rlOverhead({
      budget: budget ? positiveArg(budget, "budget", 1) : undefined,
      seeds: seeds ? positiveArg(seeds, "seeds", 1) : undefined,
      space,
    });
    console.log(`space ${space ?? "gemm_RTX_3090"}, target < 5 ms per trial`);
    console.log("strategy        trials   ms/trial (wall)   ms/trial (CPU)   worst seed (wall)");
    for (const r of rows) {
      console.log(
        `${r.strategy.padEnd(15)} ${String(r.trials).padStart(6)}   ${
          r.msPerTrial.toFixed(2).padStart(15)
        }   ${r.cpuMsPerTrial.toFixed(2).padStart(14)}   ${r.worstSeedMs.toFixed(2).padStart(17)}`,
      );
    }
  });
}
