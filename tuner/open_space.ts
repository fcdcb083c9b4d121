/**
 * A space to compare strategies on, from one string: a Kernel Tuner cache by
 * name (`"pnpoly_RTX_3090"`, one of `ALL_CACHE_NAMES`) or by path, replayed;
 * or a workload such as `"matmul:256,256,256"`, measured live on this CPU
 * through its knob template (each configuration measured once and shared by
 * every strategy and seed; the optimum is then the best measured). An unknown
 * name is refused with the nearest known names.
 *
 * @example
 * ```ts
 * import { openSpace } from "./open_space.ts";
 * const s = await openSpace("pnpoly_RTX_3090");
 * console.log(s.name, s.space.size, s.optimum);
 * await s.close();
 * try {
 *   await openSpace("pnpoly_RTX3090");
 * } catch (e) {
 *   if (!/did you mean pnpoly_RTX_3090/.test((e as Error).message)) throw e;
 * }
 * ```
 * @module
 */
import { withConditions } from "../measure/conditions.ts";
import { replayMeasurer } from "../measure/replay.ts";
import { existsSync } from "node:fs";
import { createWorkload, WORKLOADS } from "../ir/workloads.ts";
import { checkWorkloadMemory } from "../ir/limits.ts";
import type { Workload } from "../ir/workloads.ts";
import { createBuilder } from "../measure/builder.ts";
import { createRunner } from "../measure/runner.ts";
import type { Measurer, MeasureResult } from "../measure/measurer.ts";
import type { TimingOptions } from "../measure/types.ts";
import { memoMeasurer } from "../measure/memo.ts";
import { createNativeMeasurer } from "../measure/native.ts";
import {
  ALL_CACHE_NAMES,
  cacheName,
  isCacheName,
  nearestCacheNames,
  resolveCachePath,
} from "../datasets/cache_names.ts";
import type { Sample } from "../costmodel/model.ts";
import { expectedRandomCurve, type ReplaySpace, replaySpaceFromFile } from "../search/replay.ts";
import { type KnobSpace, pointOfValues } from "../ir/knobs.ts";
import type { CandidateOf } from "../search/strategy.ts";
import { defaultTemplate, templateSpace } from "../search/templates/registry.ts";
import { DEFAULTS } from "../ir/defaults.ts";

/** A space strategies are compared on ({@link openSpace}). */
export interface OpenedSpace {
  /** Shown in tables, e.g. `"cn_pnpoly on NVIDIA GeForce RTX 3090"` or `"matmul:64,64,64 (template matmul)"`. */
  name: string;
  /** The string it was opened from. */
  spec: string;
  /** The knob space strategies search. */
  space: KnobSpace;
  /** Turns a knob point of `space` into the candidate the measurer takes. */
  candidateOf: CandidateOf;
  /** Measures candidates: the replay's lookup, or the native measurer (each knob point once). */
  measurer: Measurer;
  /** How a run's workload is recorded. */
  workload: { name: string; shape: number[]; flops: number };
  /** Best known seconds (replay); undefined for live spaces: the best measured in the runs. */
  optimum?: number;
  /** Frees the measurer (live spaces: the workers). */
  close(): Promise<void>;
  /** Live spaces: takes a configuration's recorded result, so that it is not measured again. */
  remember?(knobs: number[], r: MeasureResult): void;
  /** Cache entries with time 0 ms, replayed as invalid (replay). */
  nonPositiveTimes?: number;
  /** The replayed cache itself (replay: its valid count, optimum point, lookups). */
  replay?: ReplaySpace;
  /** Configurations the space allows (replay: those of the cache with `absent: "restricted"`). */
  allowedCount?: number;
  /** Exact expected fraction of optimum of random search at budgets lo..hi (replay). */
  randomCurve?(lo: number, hi: number): number[];
}

/**
 * Why a space could not be opened: `option` names the input at fault
 * (`"space"`, `"template"` or `"transferFrom"`), `value` what it got and
 * `detail` the reason (the message is `option "value": detail`).
 */
export class OpenSpaceError extends RangeError {
  /**
   * An error naming the input at fault.
   * @param option the input at fault
   * @param value what it got
   * @param detail the reason
   */
  constructor(
    readonly option: "space" | "template" | "transferFrom",
    readonly value: string,
    readonly detail: string,
  ) {
    super(`${option} ${JSON.stringify(value)}: ${detail}`);
    this.name = "OpenSpaceError";
  }
}

/** Options of {@link openSpace}. */
export interface OpenSpaceOptions {
  /**
   * What a configuration a cache lacks is: `"invalid"` (costs an evaluation)
   * or `"restricted"` (rejected by the space). Default `DEFAULTS.compare.absent` (`"invalid"`).
   */
  absent?: "invalid" | "restricted";
  /** Knob template of a live workload space. Default: the workload's (`defaultTemplate`). */
  template?: string;
  /**
   * Makes the measurer of a live workload space. Default: the native
   * measurer of this CPU (builder cache `$TUNEBOOK_CACHE`, runner with `timing`).
   */
  liveMeasurer?: (workload: Workload, timing: TimingOptions) => Measurer | Promise<Measurer>;
  /** Timing of a live space's measurements. Default `DEFAULTS.compare.liveTiming`. */
  timing?: TimingOptions;
}

/** Whether `spec` names a live workload (`"matmul:64,64,64"`). */
export function isWorkloadSpec(spec: string): boolean {
  const colon = spec.indexOf(":");
  return colon > 0 && Object.hasOwn(WORKLOADS, spec.slice(0, colon));
}

function shapeOf(text: string): number[] {
  return text.split(",").map((s, i) => {
    const p = s.trim();
    if (!/^-?\d+$/.test(p)) {
      throw new RangeError(`dimension ${i + 1} ${JSON.stringify(p)} is not an integer`);
    }
    return Number(p);
  });
}

/**
 * Opens a space by name, path or workload spec (see the module documentation).
 *
 * @param spec a cache name (`"gemm_RTX_3090"`), a path to a `.json`/`.json.gz` cache, or `"workload:shape"`
 * @param options see {@link OpenSpaceOptions}
 * @throws {TypeError} when `spec` is not a string or an option has the wrong type
 * @throws {OpenSpaceError} (a RangeError) naming the option at fault: an unknown cache name (with the nearest known
 * names), a file that does not read, a bad shape or template
 */
export async function openSpace(
  spec: string,
  options: OpenSpaceOptions = {},
): Promise<OpenedSpace> {
  if (typeof spec !== "string" || spec.trim() === "") {
    throw new TypeError(
      `spec must be a cache name, a path or a workload such as "matmul:64,64,64", got ${
        JSON.stringify(spec) ?? String(spec)
      }`,
    );
  }
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`options must be an object, got ${String(options)}`);
  }
  const absent = options.absent ?? DEFAULTS.compare.absent;
  if (absent !== "invalid" && absent !== "restricted") {
    throw new RangeError(`absent must be "invalid" or "restricted", got ${JSON.stringify(absent)}`);
  }
  const { template } = options;
  if (template !== undefined && typeof template !== "string") {
    throw new TypeError(`template must be a template name, got ${typeof template}`);
  }
  if (isWorkloadSpec(spec)) {
    const colon = spec.indexOf(":");
    let w;
    try {
      w = createWorkload(spec.slice(0, colon), shapeOf(spec.slice(colon + 1)));
      checkWorkloadMemory(w);
    } catch (e) {
      throw new OpenSpaceError("space", spec, (e as Error).message);
    }
    let t;
    try {
      t = templateSpace(template ?? defaultTemplate(w), w);
    } catch (e) {
      throw new OpenSpaceError("template", String(template), (e as Error).message);
    }
    return await nativeSpace(spec, t, options);
  }
  if (template !== undefined) {
    throw new OpenSpaceError(
      "template",
      template,
      `${spec} is a recorded space; --template applies to a live workload space (e.g. matmul:256,256,256)`,
    );
  }
  if (isCacheName(spec) && !existsSync(resolveCachePath(spec))) {
    throw new OpenSpaceError(
      "space",
      spec,
      `no such cache; did you mean ${nearestCacheNames(spec).join(", ")}? (known: ${
        ALL_CACHE_NAMES.join(", ")
      }; or a path, or a workload such as matmul:256,256,256)`,
    );
  }
  let r;
  try {
    r = await replaySpaceFromFile(spec, { absent });
  } catch (e) {
    throw new OpenSpaceError("space", spec, (e as Error).message);
  }
  const replay = r;
  return {
    name: replay.name,
    spec,
    space: replay.space,
    candidateOf: replay.candidateOf,
    optimum: replay.optimum,
    nonPositiveTimes: replay.nonPositiveTimes,
    allowedCount: replay.allowedCount,
    replay,
    measurer: replayMeasurer(replay),
    workload: { name: cacheName(spec), shape: [], flops: 0 },
    randomCurve: (lo, hi) => expectedRandomCurve(replay, lo, hi),
    close: () => Promise.resolve(),
  };
}

/**
 * A live space of a template: the native measurer of this CPU (or
 * `options.liveMeasurer`'s), each configuration measured once whichever
 * strategy and seed proposes it.
 *
 * @param name the space's spec, e.g. `"matmul:64,64,64"`
 * @param t the template space of the workload
 * @param options the measurer and timing (see {@link OpenSpaceOptions})
 */
export async function nativeSpace(
  name: string,
  t: ReturnType<typeof templateSpace>,
  options: Pick<OpenSpaceOptions, "liveMeasurer" | "timing"> = {},
): Promise<OpenedSpace> {
  const timing = options.timing ?? DEFAULTS.compare.liveTiming;
  const native = options.liveMeasurer
    ? await options.liveMeasurer(t.workload, timing)
    // Measured on this machine: each result records the conditions during its measurement.
    : withConditions(createNativeMeasurer({
      workload: t.workload,
      builder: createBuilder({ cacheDir: Deno.env.get("TUNEBOOK_CACHE") }),
      runner: createRunner({ timing }),
    }));
  const measurer = memoMeasurer(native, (c) => String(t.space.index(c.knobs!)));
  return {
    name: `${name} (template ${t.name})`,
    spec: name,
    space: t.space,
    candidateOf: t.candidateOf,
    measurer,
    workload: { name: t.workload.name, shape: t.workload.shape, flops: t.workload.flops },
    close: () => measurer.close(),
    remember: (knobs, r) => measurer.remember(String(t.space.index(knobs)), r),
  };
}

/**
 * Records of another cache of the same kernel (another device) as samples in
 * the target space, for the transfer strategies: configurations are matched
 * by knob values; those the target space lacks are dropped.
 *
 * @param spec the other cache (name or path)
 * @param target the space compared on
 * @throws {OpenSpaceError} with option `"transferFrom"` when the cache does not read, its knobs differ or
 * nothing matches
 */
export async function transferSamples(spec: string, target: KnobSpace): Promise<Sample[]> {
  if (typeof spec !== "string") {
    throw new TypeError(`transferFrom must be a cache name or path, got ${typeof spec}`);
  }
  let source;
  try {
    source = await replaySpaceFromFile(spec);
  } catch (e) {
    throw new OpenSpaceError("transferFrom", spec, (e as Error).message);
  }
  const names = target.knobs.map((k) => k.name);
  if (source.space.knobs.map((k) => k.name).join() !== names.join()) {
    throw new OpenSpaceError("transferFrom", spec, "its knobs differ from the space's");
  }
  const out: Sample[] = [];
  for (let i = 0; i < source.space.size; i++) {
    const r = source.evaluateIndex(i);
    if (r.errorKind === "instantiation_error") continue;
    const knobs = pointOfValues(target.knobs, source.space.values(source.space.point(i)));
    if (!knobs) continue;
    out.push({ candidate: { knobs }, seconds: r.seconds });
  }
  if (out.length === 0) throw new OpenSpaceError("transferFrom", spec, "no configuration matches");
  return out;
}
