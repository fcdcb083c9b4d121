/**
 * Featurizers: turn a batch of candidates into the matrix a regressor
 * reads. Knob spaces (templates, replayed data) use knob features; trace
 * spaces use loop features or the fixed-length vector that transfers across
 * workloads.
 * @module
 */
import { checkKnobSpace } from "../ir/check.ts";
import type { KnobSpace } from "../ir/knobs.ts";
import type { Candidate } from "../ir/candidate.ts";
import { featurize, knobFeatureNames, knobFeatures } from "./features.ts";
import type { Featurizer } from "./learned.ts";

/** Knob features of candidates of one knob space. */
export function knobFeaturizer(space: KnobSpace): Featurizer {
  checkKnobSpace(space, "space");
  const cols = knobFeatureNames(space).length;
  return (candidates: Candidate[]) => {
    const data = new Float32Array(candidates.length * cols);
    candidates.forEach((c, i) => {
      if (!c.knobs) throw new TypeError("knobFeaturizer needs candidates with knobs");
      data.set(knobFeatures(space, c.knobs), i * cols);
    });
    return { data, rows: candidates.length, cols };
  };
}

/** Trace features (`"loop"` or `"fixed"`); a trace that does not lower gets a row of zeros. */
export function traceFeaturizer(kind: "loop" | "fixed"): Featurizer {
  return (candidates: Candidate[]) => {
    const traces = candidates.map((c) => {
      if (!c.trace) throw new TypeError("traceFeaturizer needs candidates with traces");
      return c.trace;
    });
    const m = featurize(traces, kind, { invalid: "zeros" });
    return { data: m.data, rows: m.rows, cols: m.cols };
  };
}
