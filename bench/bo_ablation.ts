/**
 * Variants of `bo` (search/bo.ts options) or strategies of the registry on replayed spaces, judged against the exact expectation
 * of random search with a bootstrap over seeds: per space and budget, each variant's mean fraction
 * of optimum, its difference from random, and whether random lies above the bootstrap's 95%
 * interval of that mean (a cell "below random beyond noise", marked `!`); then the budget score
 * (search/score.ts) per space and its mean. The seeds are those of `compare` (0..n−1).
 *
 * ```sh
 * deno run --allow-read bench/bo_ablation.ts --space resnet18_conv1_cpu,gemm_RTX_3090 --seeds 20 \
 *   --variant 'before={"encoding":"index","output":"log"}' --variant 'clip={"clipQuantile":0.25}'
 * deno run --allow-read bench/bo_ablation.ts --space all --seeds 20 --strategies bo,auto
 * ```
 * @module
 */
import { bootstrapMeanInterval } from "../search/bootstrap.ts";
import { bayesianOptimization, type BayesOptOptions } from "../search/bo.ts";
import { fractionAt } from "../search/comparison.ts";
import type { KnobSpace } from "../ir/knobs.ts";
import { createStrategy, STRATEGY_NAMES } from "../tuner/strategies.ts";
import { ALL_SPACES, type CandidateOf } from "../search/replay.ts";
import type { Strategy } from "../search/strategy.ts";
import { openSpace } from "../tuner/open_space.ts";
import { compareStrategies } from "../tuner/compare_strategies.ts";
import { parseFlags, runCommand, UsageError } from "../cli/args.ts";

const USAGE =
  `usage: deno run --allow-read bench/bo_ablation.ts [--space all|S1,S2,...] [--seeds 10]
  [--budget 25,50,100,200,400] [--variant 'name={json options}']... [--strategies bo,auto]`;

if (import.meta.main) {
  await runCommand("bo_ablation", async (argv) => {
    const v = parseFlags(argv, {
      space: { type: "string", default: "all" },
      seeds: { type: "string", default: "10" },
      budget: { type: "string", default: "25,50,100,200,400" },
      variant: { type: "string", multiple: true, default: [] },
      strategies: { type: "string", default: "" },
    }, USAGE);
    const seeds = Number(v.seeds);
    const budgets = v.budget.split(",").map(Number);
    if (!Number.isInteger(seeds) || seeds < 1 || budgets.some((b) => !(b > 0))) {
      throw new UsageError("--seeds must be a positive integer, --budget positive numbers");
    }
    type Make = (
      space: KnobSpace,
      seed: number,
      candidateOf: CandidateOf,
    ) => Strategy | Promise<Strategy>;
    const variants: [string, Make][] = [];
    for (const s of v.variant) {
      const k = s.indexOf("=");
      try {
        const o: Omit<BayesOptOptions, "seed"> = JSON.parse(s.slice(k + 1));
        variants.push([
          s.slice(0, k),
          (sp, seed, candidateOf) => bayesianOptimization(sp, { ...o, seed, candidateOf }),
        ]);
      } catch {
        throw new UsageError(`--variant ${s}: expected name={json options}`);
      }
    }
    for (const name of v.strategies.split(",").filter((x) => x)) {
      if (!STRATEGY_NAMES.includes(name)) {
        throw new UsageError(`--strategies: unknown strategy ${name}`);
      }
      variants.push([
        name,
        (sp, seed, candidateOf) => createStrategy(name, sp, { seed, candidateOf }),
      ]);
    }
    if (variants.length === 0) {
      variants.push([
        "bo",
        (sp, seed, candidateOf) => bayesianOptimization(sp, { seed, candidateOf }),
      ]);
    }
    const specs = v.space === "all" ? [...ALL_SPACES] : v.space.split(",");
    const totals = new Map<string, number[]>();
    const beyond = new Map<string, number>();
    for (const spec of specs) {
      let r;
      try {
        r = await openSpace(spec, { absent: "invalid" });
      } catch (e) {
        throw new UsageError(`--space ${spec}: ${(e as Error).message}`);
      }
      const bs = [...new Set(budgets.map((b) => Math.min(b, r.allowedCount!)))];
      const lo = bs[0], hi = bs[bs.length - 1];
      const random = r.randomCurve!(lo, hi);
      console.log(`\n${spec} (${seeds} seeds)`);
      console.log(
        "variant".padEnd(14) + bs.map((b) => `${b}`.padStart(16)).join("") + "   score    s/seed",
      );
      console.log(
        "random(exact)".padEnd(14) +
          bs.map((b) => random[b - lo].toFixed(3).padStart(16)).join(""),
      );
      for (const [name, make] of variants) {
        const t0 = performance.now();
        const c = await compareStrategies(r, [{
          name,
          create: (sp, { seed, candidateOf }) => make(sp, seed, candidateOf),
        }], { budgets: bs, seeds });
        const runs = c.traces.get(name)!;
        const r0 = r.optimum!;
        const secs = (performance.now() - t0) / 1000 / seeds;
        const cells = bs.map((b) => {
          const xs = runs.map((run) => fractionAt(run, b, r0));
          const mean = xs.reduce((a, c) => a + c, 0) / xs.length;
          const [, up] = bootstrapMeanInterval(xs);
          const d = mean - random[b - lo];
          const flag = up < random[b - lo] ? "!" : " ";
          if (flag === "!") beyond.set(name, (beyond.get(name) ?? 0) + 1);
          return `${mean.toFixed(3)}(${d >= 0 ? "+" : ""}${d.toFixed(3)})${flag}`.padStart(16);
        });
        const score = c.scoreOf[name]!;
        totals.set(name, [...(totals.get(name) ?? []), score]);
        console.log(
          name.padEnd(14) + cells.join("") + score.toFixed(3).padStart(8) +
            secs.toFixed(2).padStart(10),
        );
      }
    }
    console.log("\nmean score over spaces; cells below random beyond the bootstrap interval");
    for (const [name, s] of totals) {
      const m = s.reduce((a, c) => a + c, 0) / s.length;
      console.log(
        `${name.padEnd(14)} ${m.toFixed(3)}  min ${Math.min(...s).toFixed(3)}  below ${
          beyond.get(name) ?? 0
        }`,
      );
    }
  });
}
