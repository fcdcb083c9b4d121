/**
 * The strategy of a `tune` run: which space each name of the strategy table
 * (tuner/strategies.ts) searches on each target, and the options a name or a
 * target cannot honour, refused before anything is built.
 *
 * | name | `--template` absent | `--template T` |
 * | --- | --- | --- |
 * | `random` | the sketch space (CPU, or GPU for `--target cuda`) | T's knobs |
 * | `ansor` | the sketch space | refused: it searches sketches |
 * | any other | the workload's default template (CPU, or GPU) | T's knobs |
 *
 * Refused: an unknown name; a transfer strategy (tune has no records to
 * pretrain on: `compare --transfer-from`); `--target cuda` with a knob
 * strategy on a workload without a GPU template; a template that does not
 * schedule the workload.
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
import type { Workload } from "../ir/workloads.ts";
import { defaultSpace } from "../search/sketch.ts";
import { gpuSpace } from "../search/sketch_gpu.ts";
import type { Strategy } from "../search/strategy.ts";
import { defaultTemplate, type TemplateSpace, templateSpace } from "../search/templates.ts";
import { defaultGpuTemplate, gpuTemplateSpace } from "../search/templates_gpu.ts";
import { createStrategy, createTraceStrategy, STRATEGIES, STRATEGY_NAMES } from "./strategies.ts";

/** What picks a run's strategy. */
export interface StrategyRequest {
  /** A name of the strategy table. */
  strategy: string;
  workload: Workload;
  /** `cpu` or `cuda`. */
  target: string;
  /** Knob template (CPU or GPU by target); default the workload's. */
  template?: string;
}

/** The space a request searches: a knob template, or the sketches. */
type Plan = { template: TemplateSpace } | { sketches: true } | { problem: string };

function plan(r: StrategyRequest): Plan {
  const e = Object.hasOwn(STRATEGIES, r.strategy) ? STRATEGIES[r.strategy] : undefined;
  if (!e) {
    return { problem: `Unknown strategy "${r.strategy}"; known: ${STRATEGY_NAMES.join(", ")}` };
  }
  if (e.pretrain) {
    return {
      problem:
        `--strategy ${r.strategy} needs records of another device to pretrain on, which tune does not take; use compare --transfer-from`,
    };
  }
  if (!e.knobs) {
    if (r.template !== undefined) {
      return {
        problem:
          `--template ${r.template}: strategy ${r.strategy} searches sketches (traces), not a knob template; drop --template or pick a knob strategy`,
      };
    }
    return { sketches: true };
  }
  if (e.traces && r.template === undefined) return { sketches: true };
  const cuda = r.target === "cuda";
  const name = r.template ?? (cuda ? defaultGpuTemplate(r.workload) : defaultTemplate(r.workload));
  if (name === undefined) {
    return {
      problem:
        `--target cuda: no GPU knob template schedules ${r.workload.name}; strategy ${r.strategy} needs one (${
          STRATEGY_NAMES.filter((n) => STRATEGIES[n].traces).join(" and ")
        } search the sketches)`,
    };
  }
  try {
    return {
      template: cuda ? gpuTemplateSpace(name, r.workload) : templateSpace(name, r.workload),
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
  return "problem" in p ? p.problem : undefined;
}

/** The strategy of a run; a request {@link strategyProblem} refuses is a RangeError. */
export async function strategyFor(r: StrategyRequest & { seed: number }): Promise<Strategy> {
  const p = plan(r);
  if ("problem" in p) throw new RangeError(p.problem);
  if ("sketches" in p) {
    const space = r.target === "cuda" ? gpuSpace(r.workload) : defaultSpace(r.workload);
    return createTraceStrategy(r.strategy, space, { seed: r.seed });
  }
  const t = p.template;
  return await createStrategy(r.strategy, t.space, { seed: r.seed, candidateOf: t.candidateOf });
}
