/**
 * The registry of the CPU knob templates (one file each in this folder; AutoTVM
 * style: a schedule written once as a function of named knobs). The knob space is finite and indexable; each point becomes a
 * concrete schedule whose trace holds no sampling instruction, only
 * primitives with the knob values as arguments.
 *
 * Templates: `matmul` (tiles of i, j, k, loop order, cache write, vectorize,
 * unroll, parallel), `matmul-packed` (register tile MR x NR, cache blocks
 * MC x NC x KC, packed A and B panels, parallel row blocks), `dense` (the same with bias + ReLU fused at the tile),
 * `conv2d` in the four-knob form of the RL study (tile_ic, tile_oc, tile_ow,
 * unroll_kw; AutoTVM's x86 conv2d), `conv2d-rich` (adds tile_oh, loop
 * order, a register tile and padding placement), `conv2d-packed` (a register
 * tile vectorized along output columns), `conv2d-nchwc` (vectorized along
 * output channels, filters rewritten once into channel blocks) and
 * `conv2d-nchwxc` (the same reading a channel-blocked copy of its input).
 *
 * @example
 * ```ts
 * import { templateSpace } from "./registry.ts";
 * import { createWorkload } from "../../ir/workloads.ts";
 * const t = templateSpace("conv2d", createWorkload("conv2d", [1, 64, 56, 56, 64, 3, 3, 1, 1]));
 * if (t.space.knobs.length !== 4) throw new Error();
 * const c = t.candidateOf(t.space.point(0));
 * if (!c.trace) throw new Error();
 * ```
 * @module
 */
import { createPrng } from "../../ir/prng.ts";
import { Schedule } from "../../ir/schedule.ts";
import { traceOf } from "../../ir/trace.ts";
import type { Workload } from "../../ir/workloads.ts";
import { type RegisterFile, registerFile } from "../../ir/target_cpu.ts";
import { checkInteger, checkString, checkWorkload, described } from "../../ir/check.ts";
import { KnobSpace, type Point, pointOfValues, withDefaults } from "../../ir/knobs.ts";
import type { Candidate } from "../strategy.ts";
import { CONV2D } from "./conv2d.ts";
import { CONV2D_BLOCKED } from "./conv2d_blocked.ts";
import { CONV2D_NCHWC } from "./conv2d_nchwc.ts";
import { CONV2D_NCHWXC } from "./conv2d_nchwxc.ts";
import { CONV2D_PACKED } from "./conv2d_packed.ts";
import { CONV2D_RICH } from "./conv2d_rich.ts";
import { DENSE } from "./dense.ts";
import { DEPTHWISE_BLOCKED } from "./depthwise_blocked.ts";
import { MATMUL } from "./matmul.ts";
import { MATMUL_PACKED } from "./matmul_packed.ts";
import type { Template, TemplateSpace } from "./template.ts";

export type { TemplateSpace } from "./template.ts";

/** The templates by name, in the order {@link TEMPLATE_NAMES} lists them. */
const TEMPLATES: Record<string, Template> = {
  matmul: MATMUL,
  "matmul-packed": MATMUL_PACKED,
  dense: DENSE,
  conv2d: CONV2D,
  "conv2d-packed": CONV2D_PACKED,
  "conv2d-nchwc": CONV2D_NCHWC,
  "conv2d-nchwxc": CONV2D_NCHWXC,
  "conv2d-blocked": CONV2D_BLOCKED,
  "depthwise-blocked": DEPTHWISE_BLOCKED,
  "conv2d-rich": CONV2D_RICH,
};

/** Names of the knob templates. */
export const TEMPLATE_NAMES: readonly string[] = Object.keys(TEMPLATES);

/**
 * Names of the templates that schedule a workload.
 *
 * @example
 * ```ts
 * import { templatesOf } from "./registry.ts";
 * import { matmul } from "../../ir/workloads.ts";
 * if (!templatesOf(matmul(8, 8, 8)).includes("matmul-packed")) throw new Error();
 * ```
 */
export function templatesOf(w: Workload): string[] {
  return TEMPLATE_NAMES.filter((name) => TEMPLATES[name].workloads.includes(w.name));
}

/**
 * The knob space of a template on a workload; register rules count
 * `target`'s registers (default: this machine's, {@link registerFile}).
 */
export function templateSpace(
  name: string,
  w: Workload,
  target: RegisterFile = registerFile(),
): TemplateSpace {
  checkString(name, "name", { what: `a template name (${TEMPLATE_NAMES.join(", ")})` });
  checkWorkload(w, "workload");
  const reg = target as Partial<RegisterFile> | undefined;
  if (typeof reg !== "object" || reg === null) {
    throw new TypeError(
      `target must be a register file (registerFile()), got ${described(target)}`,
    );
  }
  checkInteger(reg.lanes, "target.lanes", { min: 1 });
  checkInteger(reg.registers, "target.registers", { min: 1 });
  const t = Object.hasOwn(TEMPLATES, name) ? TEMPLATES[name] : undefined;
  if (!t) throw new RangeError(`Unknown template "${name}"; known: ${TEMPLATE_NAMES.join(", ")}`);
  if (!t.workloads.includes(w.name)) {
    throw new RangeError(`Template "${name}" schedules ${t.workloads.join(", ")}, not ${w.name}`);
  }
  const valid = t.isValid;
  const space = new KnobSpace(
    t.knobs(w),
    valid ? { isValid: (values) => valid(values, w, target) } : {},
  );
  return {
    name,
    workload: w,
    space,
    candidateOf(point: Point): Candidate {
      const sch = new Schedule(w, { prng: createPrng(0) });
      t.apply(sch, space.values(point));
      return { knobs: [...point], trace: traceOf(sch) };
    },
    heuristic(): Candidate | undefined {
      const values = t.heuristic?.(w, target);
      const point = values && pointOfValues(space.knobs, withDefaults(space.knobs, values));
      return point && space.isValid(point) ? this.candidateOf(point) : undefined;
    },
  };
}

/** The templates of the channel-blocked workloads, whose names are not a template's. */
const BLOCKED_DEFAULTS: Record<string, string> = {
  conv2d_nchwc: "conv2d-blocked",
  depthwise_conv2d_nchwc: "depthwise-blocked",
};

/**
 * The default template of a workload: the four-knob form for conv2d,
 * `conv2d-blocked` for the blocked convolution, `depthwise-blocked` for the
 * blocked depthwise one, else the workload's name.
 */
export function defaultTemplate(w: Workload): string {
  return Object.hasOwn(BLOCKED_DEFAULTS, w.name) ? BLOCKED_DEFAULTS[w.name] : w.name;
}
