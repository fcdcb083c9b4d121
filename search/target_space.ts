/**
 * The design spaces of a target ({@link Target} of `ir/target.ts`): which
 * knob templates it has, its default template for a workload, a template's
 * space with the target's facts (the CPU's register file, the GPU's thread
 * limit), and its sketch space. GPU targets get the GPU templates and
 * sketches; the CPU its own; a replayed target has no template (its space
 * is the recorded one, `search/replay.ts`).
 *
 * @example
 * ```ts
 * import { resolveTarget } from "../ir/target.ts";
 * import { matmul } from "../ir/workloads.ts";
 * import { defaultTemplateOf, targetTemplateSpace } from "./target_space.ts";
 * const cuda = resolveTarget("cuda"), w = matmul(256, 256, 256);
 * if (defaultTemplateOf(cuda, w) !== "gemm-gpu") throw new Error();
 * const avx2 = resolveTarget("cpu", { flags: new Set(["avx2", "fma"]) });
 * if (targetTemplateSpace(avx2, "matmul", w).name !== "matmul") throw new Error();
 * ```
 * @module
 */
import type { MathKind } from "../ir/gemm_math.ts";
import type { Target } from "../ir/target.ts";
import type { Workload } from "../ir/workloads.ts";
import { defaultSpace } from "./sketch.ts";
import { gpuSpace } from "./sketch_gpu.ts";
import type { DesignSpace } from "./space.ts";
import {
  defaultTemplate,
  TEMPLATE_NAMES,
  type TemplateSpace,
  templateSpace,
} from "./templates/registry.ts";
import {
  defaultGpuTemplate,
  GPU_TEMPLATE_NAMES,
  gpuTemplateSpace,
} from "./templates/registry_gpu.ts";

/** Options of a GPU target's spaces. */
export interface TargetSpaceOptions {
  /** The arithmetic GPU kernels may use (`ir/gemm_math.ts`). Default every kind. */
  math?: readonly MathKind[];
}

/** The names of the knob templates a target has (none for a replayed one). */
export function templateNamesOf(target: Target): readonly string[] {
  if (target.replay) return [];
  return target.gpu ? GPU_TEMPLATE_NAMES : TEMPLATE_NAMES;
}

/** The default knob template of a workload on a target, if it has one. */
export function defaultTemplateOf(target: Target, w: Workload): string | undefined {
  if (target.replay) return undefined;
  return target.gpu ? defaultGpuTemplate(w) : defaultTemplate(w);
}

/**
 * The space of template `name` on workload `w` for a target: register rules
 * count the target's registers; a GPU template's threads per block stay
 * within its limits.
 *
 * @throws {RangeError} for a replayed target, an unknown template, or one that does not schedule `w`
 */
export function targetTemplateSpace(
  target: Target,
  name: string,
  w: Workload,
  options: TargetSpaceOptions = {},
): TemplateSpace {
  if (target.replay) throw new RangeError(`target: a replayed target has no template "${name}"`);
  if (!target.gpu) return templateSpace(name, w, target.registers);
  return gpuTemplateSpace(name, w, {
    ...(target.limits ? { maxThreadsPerBlock: target.limits.maxThreadsPerBlock } : {}),
    ...(options.math ? { math: options.math } : {}),
  });
}

/**
 * The sketch space (rule-generated traces) of a workload on a target: the
 * GPU sketches on a GPU, the CPU's multi-level tiling on the CPU.
 *
 * @throws {RangeError} for a replayed target
 */
export function targetSketchSpace(
  target: Target,
  w: Workload,
  options: TargetSpaceOptions = {},
): DesignSpace {
  if (target.replay) throw new RangeError("target: a replayed target has no sketches");
  return target.gpu ? gpuSpace(w, options.math ? { math: options.math } : {}) : defaultSpace(w);
}
