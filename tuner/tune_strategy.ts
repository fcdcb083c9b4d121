/**
 * The strategy of a `tune` run: which space each name of the strategy table
 * (tuner/strategies.ts) searches on each target, and the options a name or a
 * target cannot honour, refused before anything is built.
 *
 * | name | `--template` absent | `--template T` | `--space CACHE` |
 * | --- | --- | --- | --- |
 * | `random` | the sketch space (CPU, or GPU for `--target cuda`) | T's knobs | the cache's knobs |
 * | `ansor` | the sketch space | refused: it searches sketches | refused |
 * | any other | the workload's default template (CPU, or GPU) | T's knobs | the cache's knobs |
 *
 * On `--target cuda`, `math` (`ir/gemm_math.ts`) limits the arithmetic of
 * the sketches and of the `gemm-gpu` template.
 *
 * A name may carry a preset, `STRATEGY@PRESET` (tuner/presets.ts
 * `resolveStrategy`); its settings apply to a knob space, so a preset on a
 * run of the sketches is refused, as are a missing preset and a bad setting.
 *
 * Refused: an unknown name; a transfer strategy (tune has no records to
 * pretrain on: `compare --transfer-from`); `--target cuda` with a knob
 * strategy on a workload without a GPU template; a template that does not
 * schedule the workload; `math` on a target other than cuda, or without
 * `fp32` where only FP32 kernels schedule the workload.
 *
 * @example
 * ```ts
 * import { strategyProblem } from "./tune_strategy.ts";
 * import { createWorkload } from "../ir/workloads.ts";
 * const w = createWorkload("matmul", [64, 64, 64]);
 * if (strategyProblem({ strategy: "sa", workload: w, target: "cpu" }) !== undefined) {
 *   throw new Error();
 * }
 * if (!/--template/.test(strategyProblem({ strategy: "ansor", workload: w, target: "cpu", template: "matmul" })!)) {
 *   throw new Error();
 * }
 * ```
 * @module
 */
import type { KnobSpace } from "../ir/knobs.ts";
import { gemmProblemOf } from "../ir/gemm_gpu.ts";
import type { MathKind } from "../ir/gemm_math.ts";
import { resolveTarget } from "../ir/target.ts";
import type { Workload } from "../ir/workloads.ts";
import { seededStrategy } from "../search/seeded.ts";
import type { GemmConfigCandidate } from "../search/gemm_configs.ts";
import type { Candidate, CandidateOf, Strategy } from "../search/strategy.ts";
import {
  defaultTemplateOf,
  targetSketchSpace,
  targetTemplateSpace,
} from "../search/target_space.ts";
import type { TemplateSpace } from "../search/templates/registry.ts";
import { gemmPointOf } from "../search/templates/registry_gpu.ts";
import { createStrategy, createTraceStrategy, STRATEGIES, STRATEGY_NAMES } from "./strategies.ts";
import { type ResolvedStrategy, resolveStrategy } from "./presets.ts";

/** What picks a run's strategy. */
export interface StrategyRequest {
  /** A name of the strategy table, or `STRATEGY@PRESET` (tuner/presets.ts `resolveStrategy`). */
  strategy: string;
  /**
   * The strategy's settings as a run recorded them (a resumed run); given, a
   * preset is not read again. Default: the preset's (none for a plain name).
   */
  hyper?: Readonly<Record<string, number | string>>;
  /** The workload measured (absent when `replay` is given). */
  workload?: Workload;
  /**
   * A replayed cache's knob space (`tune --space`), searched instead of a
   * workload's; `true` for one not opened yet ({@link strategyProblem} only).
   */
  replay?: { space: KnobSpace; candidateOf: CandidateOf } | true;
  /** `cpu` or `cuda`. */
  target: string;
  /** Knob template (CPU or GPU by target); default the workload's. */
  template?: string;
  /** Target cuda: the arithmetic the kernels may use (default every kind). */
  math?: readonly MathKind[];
}

/** The space a request searches: a knob template, or the sketches. */
type Plan =
  | { template: Pick<TemplateSpace, "space" | "candidateOf"> & { name?: string } }
  | { sketches: Workload }
  | { problem: string };

function plan(request: StrategyRequest): Plan {
  let resolved: ResolvedStrategy;
  try {
    resolved = resolveStrategy(request.strategy, { hyper: request.hyper });
  } catch (e) {
    return { problem: (e as Error).message };
  }
  // The table's name from here on; a preset's settings apply to a knob space only.
  const r = { ...request, strategy: resolved.strategy };
  const e = STRATEGIES[r.strategy];
  if (e.pretrain) {
    return {
      problem:
        `--strategy ${r.strategy} needs records of another device to pretrain on, which tune does not take; use compare --transfer-from`,
    };
  }
  const p = knobPlan(r, e);
  if ("sketches" in p && Object.keys(resolved.hyper).length > 0) {
    return {
      problem: `--strategy ${request.strategy}: its settings (${
        JSON.stringify(resolved.hyper)
      }) apply to a knob space, and this run searches the sketches; give --template or --space`,
    };
  }
  return p;
}

function knobPlan(r: StrategyRequest, e: (typeof STRATEGIES)[string]): Plan {
  if (r.replay) {
    if (!e.knobs) {
      return {
        problem:
          `--space: strategy ${r.strategy} searches sketches (traces), and a replayed cache is a knob space`,
      };
    }
    if (r.template !== undefined) {
      return { problem: `--template ${r.template}: a replayed cache (--space) has no templates` };
    }
    if (r.replay === true) return { problem: "" };
    return { template: r.replay };
  }
  if (!r.workload) return { problem: "A strategy needs a workload or a replayed space" };
  const workload = r.workload;
  const target = resolveTarget(r.target);
  if (r.math !== undefined && !target.nvcc) {
    return {
      problem: `--math: only target cuda chooses its arithmetic (got --target ${r.target})`,
    };
  }
  if (r.math !== undefined && !r.math.includes("fp32") && !gemmProblemOf(workload)) {
    return {
      problem: `--math ${r.math.join(",")}: ${workload.name} has only FP32 GPU kernels; add fp32`,
    };
  }
  if (!e.knobs) {
    if (r.template !== undefined) {
      return {
        problem:
          `--template ${r.template}: strategy ${r.strategy} searches sketches (traces), not a knob template; drop --template or pick a knob strategy`,
      };
    }
    return { sketches: workload };
  }
  if (e.traces && r.template === undefined) return { sketches: workload };
  const name = r.template ?? defaultTemplateOf(target, workload);
  if (name === undefined) {
    return {
      problem:
        `--target cuda: no GPU knob template schedules ${workload.name}; strategy ${r.strategy} needs one (${
          STRATEGY_NAMES.filter((n) => STRATEGIES[n].traces).join(" and ")
        } search the sketches)`,
    };
  }
  try {
    return {
      template: targetTemplateSpace(target, name, workload, r.math ? { math: r.math } : {}),
    };
  } catch (e) {
    const flag = r.template === undefined ? "--strategy " + r.strategy : "--template " + name;
    return { problem: `${flag}: ${(e as Error).message}` };
  }
}

/**
 * Why a request cannot run, in one line naming the flag, or undefined when it
 * can.
 */
export function strategyProblem(r: StrategyRequest): string | undefined {
  const p = plan(r);
  return "problem" in p && p.problem !== "" ? p.problem : undefined;
}

/** What {@link configSeeds} returns: the candidates to measure first, and whether the strategy learns from them. */
export interface ConfigSeeds {
  seeds: Candidate[];
  /** Pass the seeds' observations on to the strategy (`search/seeded.ts`'s `share`). */
  share: boolean;
}

/**
 * A run's GEMM configurations (`search/gemm_configs.ts`) as its strategy
 * would propose them, so that it learns from them: traces of the GPU
 * sketches for a search of the sketches; points of the `gemm-gpu` template
 * (knobs and trace) for a knob strategy on it, a configuration that is not
 * a point of it keeping its trace, which a knob strategy does not read; held
 * back from a strategy of any other space (a loop-nest template), which
 * they are not points of. {@link strategyFor} measures them first.
 */
export function configSeeds(
  r: StrategyRequest,
  configs: readonly GemmConfigCandidate[],
): ConfigSeeds {
  return seedsOf(plan(r), configs);
}

function seedsOf(p: Plan, configs: readonly GemmConfigCandidate[]): ConfigSeeds {
  if ("sketches" in p) return { seeds: configs.map((c) => c.candidate), share: true };
  if ("template" in p && p.template.name === "gemm-gpu") {
    const t = p.template;
    const seeds = configs.map((c) => {
      const point = gemmPointOf(t.space, c.values);
      return point ? t.candidateOf(point) : c.candidate;
    });
    return { seeds, share: true };
  }
  return { seeds: configs.map((c) => c.candidate), share: false };
}

/**
 * The strategy of a run, preceded by the GEMM configurations `configs` as
 * {@link configSeeds} gives them (on the same space); a request
 * {@link strategyProblem} refuses is a RangeError.
 */
export async function strategyFor(
  r: StrategyRequest & {
    seed: number;
    configs?: readonly GemmConfigCandidate[];
    /** `sa`: see `StrategyContext.remeasureMargin`. Default 0. */
    remeasureMargin?: number;
  },
): Promise<Strategy> {
  const p = plan(r);
  if ("problem" in p) throw new RangeError(p.problem || "The replayed space is not open");
  let strategy: Strategy;
  if ("sketches" in p) {
    const space = targetSketchSpace(
      resolveTarget(r.target),
      p.sketches,
      r.math ? { math: r.math } : {},
    );
    strategy = createTraceStrategy(resolveStrategy(r.strategy).strategy, space, { seed: r.seed });
  } else {
    const t = p.template;
    const { strategy: name, hyper } = resolveStrategy(r.strategy, { hyper: r.hyper });
    strategy = await createStrategy(name, t.space, {
      seed: r.seed,
      candidateOf: t.candidateOf,
      ...(Object.keys(hyper).length > 0 ? { hyper } : {}),
      ...(r.remeasureMargin ? { remeasureMargin: r.remeasureMargin } : {}),
    });
  }
  if (!r.configs?.length) return strategy;
  const { seeds, share } = seedsOf(p, r.configs);
  return seededStrategy(strategy, seeds, { share });
}
