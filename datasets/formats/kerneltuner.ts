/**
 * The Kernel Tuner cache export format (`kerneltuner`): one JSON object as
 * Kernel Tuner writes its cache files, for the knob-vector records of exactly
 * one workload, so that an exhaustively measured space replays with
 * `search/replay.ts` (and `compare --space FILE`) like the shared GPU caches.
 * See {@link kernelTunerCacheOf}.
 * @module
 */
import type { ErrorKind } from "../db.ts";
import { ExportError, type RowContext } from "../export_rows.ts";
import type { ExportFormatWriter } from "./format.ts";

/** Kernel Tuner's error markers for tunebook's error kinds (the inverse of the importer's map). */
export const KERNEL_TUNER_MARKERS: Readonly<Record<Exclude<ErrorKind, "none">, string>> = Object
  .freeze({
    instantiation_error: "InvalidConfig",
    compile_host: "CompilationFailedConfig",
    build_timeout: "CompilationFailedConfig",
    runtime_crash: "RuntimeFailedConfig",
    runtime_error: "RuntimeFailedConfig",
    run_timeout: "RuntimeFailedConfig",
    wrong_answer: "RuntimeFailedConfig",
    no_device: "RuntimeFailedConfig",
    unknown: "RuntimeFailedConfig",
    worker_lost: "RuntimeFailedConfig",
    run_timeout_transient: "RuntimeFailedConfig",
    build_timeout_transient: "CompilationFailedConfig",
  });

/**
 * A knob's options as Kernel Tuner parameter values: a split's innermost
 * factor when those are distinct (else all its factors, `4x16`), a scalar
 * as itself, anything else as JSON.
 */
function ktValues(options: readonly unknown[]): (number | string | boolean)[] {
  const inner = options.map((o) => Array.isArray(o) ? o[o.length - 1] : undefined);
  const innerOnly = new Set(inner).size === options.length;
  return options.map((o, i) => {
    if (Array.isArray(o)) return innerOnly ? inner[i] as number : o.join("x");
    if (typeof o === "number" || typeof o === "string" || typeof o === "boolean") return o;
    return JSON.stringify(o);
  });
}

/**
 * Builds a Kernel Tuner cache (as its cache JSON files hold) from the
 * knob-vector records of one workload: `tune_params` are the knobs of the
 * records' knob space (a split knob's value is its innermost factor, e.g.
 * `tile_ic: 16` for the split `[4, 16]`, or `"4x16"` when inner factors
 * repeat), `time` and `times` are in milliseconds, a failed record's `time`
 * is Kernel Tuner's marker (see {@link KERNEL_TUNER_MARKERS}), and
 * `compile_time`/`benchmark_time` are the build and run wall times in ms.
 * When a configuration was measured more than once, the first record wins.
 * `kernel_name` is the workload key (e.g. `conv2d:1,64,56,56,64,3,3,1,1`),
 * `device_name` the CPU model with its thread count, `problem_size` the
 * workload's shape. A `tunebook` object adds the workload key, the run ids
 * and the machine description.
 *
 * @throws {ExportError} when the rows span several workloads or knob spaces, or have no knob vectors
 */
export function kernelTunerCacheOf(ctx: readonly RowContext[]): Record<string, unknown> {
  const rows = ctx.filter((c) => c.knobs !== null);
  if (rows.length === 0) {
    throw new ExportError(
      "The kerneltuner format needs records with knob vectors (runs of a knob template); none selected",
    );
  }
  const keys = [...new Set(rows.map((c) => c.row.workload_key))];
  if (keys.length > 1) {
    throw new ExportError(
      `The kerneltuner format holds one workload, but the selected runs measure ${keys.length} (${
        keys.join(", ")
      }); choose runs with --runs`,
    );
  }
  const space = rows[0].space;
  if (!space) throw new ExportError(`No knob space is known for the runs of ${keys[0]}`);
  const names = space.knobs.map((k) => k.name);
  for (const c of rows) {
    if (c.space && c.space.knobs.map((k) => k.name).join() !== names.join()) {
      throw new ExportError(
        `Runs of ${keys[0]} use different knob spaces (${names.join(",")} and ${
          c.space.knobs.map((k) => k.name).join(",")
        }); choose runs with --runs`,
      );
    }
  }
  const tuneParams: Record<string, (number | string | boolean)[]> = {};
  for (const k of space.knobs) tuneParams[k.name] = ktValues(k.options);
  const cache: Record<string, Record<string, unknown>> = {};
  for (const c of rows) {
    const values = c.knobs!.map((i, j) => tuneParams[names[j]][i]);
    const key = values.join(",");
    if (key in cache) continue;
    const r = c.row;
    const entry: Record<string, unknown> = {};
    names.forEach((n, j) => entry[n] = values[j]);
    const times = (JSON.parse(r.times) as number[]).map((t) => t * 1e3);
    entry.time = r.error_kind === "none"
      ? r.seconds! * 1e3
      : KERNEL_TUNER_MARKERS[r.error_kind as Exclude<ErrorKind, "none">];
    entry.times = times;
    // Our run seconds hold the output check; Kernel Tuner's benchmark_time does not.
    const verify = r.verify_seconds ?? 0;
    entry.compile_time = r.build_seconds * 1e3;
    entry.verification_time = verify * 1e3;
    entry.benchmark_time = Math.max(0, r.run_seconds - verify) * 1e3;
    entry.strategy_time = (r.strategy_seconds ?? 0) * 1e3;
    entry.framework_time = (r.framework_seconds ?? 0) * 1e3;
    entry.timestamp = r.timestamp;
    cache[key] = entry;
  }
  const first = rows[0].row;
  const machine = JSON.parse(first.machine) as Record<string, unknown>;
  return {
    device_name: `${machine.cpu ?? "unknown CPU"} (${
      machine.ompNumThreads ?? machine.cores
    } threads)`,
    kernel_name: first.workload_key,
    problem_size: JSON.parse(first.shape),
    tune_params_keys: names,
    tune_params: tuneParams,
    objective: "time",
    cache,
    tunebook: {
      workload_key: first.workload_key,
      runs: [...new Set(rows.map((c) => c.row.run_id))],
      machine,
      compiler: first.compiler,
      tunebook_version: first.tunebook_version,
    },
  };
}

/**
 * The `kerneltuner` format.
 *
 * @example
 * ```ts
 * import { KERNEL_TUNER_FORMAT } from "./kerneltuner.ts";
 * if (KERNEL_TUNER_FORMAT.name !== "kerneltuner") throw new Error();
 * ```
 */
export const KERNEL_TUNER_FORMAT: ExportFormatWriter = Object.freeze<ExportFormatWriter>({
  name: "kerneltuner",
  encode: (ctx) => JSON.stringify(kernelTunerCacheOf(ctx), null, 1) + "\n",
});
