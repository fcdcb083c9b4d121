/**
 * Design spaces. A trace space samples complete schedules of one workload
 * from sketches (structures) whose sampling instructions are the searchable
 * part, as in Ansor and MetaSchedule.
 * @module
 */
import type { Prng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { type Trace, traceOf } from "../ir/trace.ts";
import type { Workload } from "../ir/workloads.ts";

/** A function that builds a schedule with sampling instructions. */
export type Sketch = (sch: Schedule) => void;

/** A space of schedules of one workload. */
export interface DesignSpace {
  /** The workload scheduled. */
  readonly workload: Workload;
  /** Names of the sketches, in the order `sample` draws from. */
  readonly sketches: readonly string[];
  /** Samples one complete schedule; its trace records every decision. */
  sample(prng: Prng): Trace;
  /**
   * The postprocessor of a mutated trace (MetaSchedule's postprocessors):
   * the replayed trace, or undefined when it is not a legal schedule of the
   * space. Default `verify` of search/mutators.ts (replay and lower).
   */
  postprocess?(trace: Trace, prng: Prng): Trace | undefined;
}

/** A trace space from named sketches, each drawn with equal probability. */
export function traceSpace(workload: Workload, sketches: Record<string, Sketch>): DesignSpace {
  const names = Object.keys(sketches);
  if (names.length === 0) throw new RangeError("A design space needs at least one sketch");
  return {
    workload,
    sketches: names,
    sample(prng: Prng): Trace {
      const sketch = sketches[prng.pick(names)];
      const sch = new Schedule(workload, { prng });
      sketch(sch);
      return traceOf(sch);
    },
  };
}
