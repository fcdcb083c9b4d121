/**
 * Replay as a {@link Measurer} (Kernel Tuner's simulation runner): each
 * candidate's knob vector is looked up in a table of recorded measurements,
 * and nothing is built or run. The caller builds the table, from a Kernel
 * Tuner cache (the recorded space of `search/replay.ts`, whose measurer is
 * {@link replayMeasurer}) or from our own records ({@link recordTable}); this
 * module only looks up. It is the one replay measurer: `search/` keeps the
 * recorded space (the knob space and its lookups), never a measurer.
 *
 * A replayed result has one time (the recorded seconds per call) and the
 * entry's recorded build and run seconds (zero when it has none); an entry
 * without seconds is a failure of its error kind.
 *
 * @example
 * ```ts
 * import { createReplayMeasurer, recordTable } from "./replay.ts";
 * const table = recordTable([
 *   [[0, 1], { errorKind: "none", seconds: 2e-3 }],
 *   [[1, 1], { errorKind: "runtime_error", error: "RuntimeFailedConfig" }],
 * ]);
 * const m = createReplayMeasurer(table, { name: "replay:toy" });
 * const [a, b, c] = await m.measure([{ knobs: [0, 1] }, { knobs: [1, 1] }, { knobs: [0, 0] }]);
 * if (a.times[0] !== 2e-3 || b.errorKind !== "runtime_error") throw new Error();
 * if (c.errorKind !== "instantiation_error") throw new Error(); // not in the table
 * ```
 * @module
 */
import type { Candidate } from "../ir/candidate.ts";
import type { ErrorKind } from "../ir/error_kind.ts";
import type { MeasureBatchOptions, Measurer, MeasureResult } from "./measurer.ts";

/** One recorded measurement of a configuration. */
export interface ReplayEntry {
  /** `"none"` when the configuration was measured without error. */
  errorKind: ErrorKind;
  /** Seconds per call when `errorKind` is `"none"`. */
  seconds?: number;
  /** Why it failed, or the source's error marker. */
  error?: string;
  /** Recorded seconds spent compiling it (default 0: nothing is built). */
  buildSeconds?: number;
  /** Recorded seconds spent measuring it (default 0: nothing is run). */
  runSeconds?: number;
}

/** Recorded measurements by knob vector. */
export interface ReplayTable {
  /** The entry of a knob vector (an entry of some error kind when there is none). */
  get(knobs: readonly number[]): ReplayEntry;
}

/** Options of {@link createReplayMeasurer}. */
export interface ReplayMeasurerOptions {
  /** {@link Measurer.name}. Default `"replay"`. */
  name?: string;
}

/**
 * A measurer answering from `table`; a candidate without knobs is a
 * RangeError (a trace space cannot be replayed).
 */
export function createReplayMeasurer(
  table: ReplayTable,
  options: ReplayMeasurerOptions = {},
): Measurer {
  const name = options.name ?? "replay";
  return {
    name,
    measure(batch: readonly Candidate[], o: MeasureBatchOptions = {}): Promise<MeasureResult[]> {
      try {
        const out = batch.map((c, i) => {
          if (!c.knobs) {
            throw new RangeError(`Measurer "${name}" replays knob vectors: a candidate has none`);
          }
          const r = resultOf(table.get(c.knobs));
          o.onResult?.(i, r);
          return r;
        });
        return Promise.resolve(out);
      } catch (e) {
        return Promise.reject(e);
      }
    },
  };
}

/** A measurement result of a recorded entry. */
export function resultOf(e: ReplayEntry): MeasureResult {
  return {
    errorKind: e.errorKind,
    ...(e.error !== undefined ? { error: e.error } : {}),
    times: e.errorKind === "none" && e.seconds !== undefined ? [e.seconds] : [],
    buildSeconds: e.buildSeconds ?? 0,
    runSeconds: e.runSeconds ?? 0,
  };
}

/**
 * A table from recorded (knobs, entry) pairs, e.g. the results of an earlier
 * run; a knob vector not recorded is `missing` (default: an
 * `instantiation_error` saying so).
 */
export function recordTable(
  records: Iterable<readonly [readonly number[], ReplayEntry]>,
  missing: ReplayEntry = { errorKind: "instantiation_error", error: "not in the recorded data" },
): ReplayTable {
  const byKey = new Map<string, ReplayEntry>();
  for (const [knobs, entry] of records) byKey.set(knobs.join(","), entry);
  return { get: (knobs) => byKey.get(knobs.join(",")) ?? missing };
}

/** A recorded space as {@link replayMeasurer} reads it (`search/replay.ts`'s `ReplaySpace`). */
export interface RecordedSpace {
  /** Kernel and device, e.g. `"Xgemm on NVIDIA GeForce RTX 3090"`. */
  name: string;
  /** The recorded measurement of a point (a RangeError for a knob vector outside the space). */
  evaluate(point: readonly number[]): ReplayEntry;
  /** `evaluate` with the recorded build and run seconds, where the source keeps them. */
  recorded?(point: readonly number[]): ReplayEntry;
}

/**
 * The measurer of a recorded space (`"replay:<name>"`), for the tuning loop:
 * each candidate's knobs are the point it evaluates.
 *
 * @example
 * ```ts
 * import { replayMeasurer } from "./replay.ts";
 * const m = replayMeasurer({
 *   name: "toy",
 *   evaluate: (p) => p[0] === 0 ? { errorKind: "none", seconds: 1e-3 } : { errorKind: "runtime_error" },
 * });
 * const [a] = await m.measure([{ knobs: [0] }]);
 * if (m.name !== "replay:toy" || a.times[0] !== 1e-3) throw new Error();
 * ```
 */
export function replayMeasurer(space: RecordedSpace): Measurer {
  const get = space.recorded
    ? (knobs: readonly number[]) => space.recorded!(knobs)
    : (knobs: readonly number[]) => space.evaluate(knobs);
  return createReplayMeasurer({ get }, {
    name: `replay:${space.name}`,
  });
}
