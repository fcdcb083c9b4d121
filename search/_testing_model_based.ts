/**
 * The fixture of the model-based tuner's tests (search/model_based_test.ts,
 * and tuner/model_based_runs_test.ts, which runs it through the tuning loop):
 * a 4-knob space of 8 options each, a smooth cost with its optimum at
 * (2, 3, 4, 5), failures where the first knob is 7, and an oracle model.
 * @module
 */
import type { CostModel, Sample } from "../costmodel/model.ts";
import { KnobSpace } from "../ir/knobs.ts";
import type { Candidate } from "./strategy.ts";

/** 4 knobs of 8 options. */
export const mbSpace: KnobSpace = new KnobSpace(
  [0, 1, 2, 3].map((i) => ({
    name: `k${i}`,
    kind: "other" as const,
    options: [0, 1, 2, 3, 4, 5, 6, 7],
  })),
);

/** Seconds of a point: 1 at (2, 3, 4, 5), growing quadratically away from it. */
export const mbCost = (p: number[]): number => 1 + p.reduce((a, v, i) => a + (v - (i + 2)) ** 2, 0);

/** Measures candidates by {@link mbCost}; a first knob of 7 is a runtime error. */
export const mbEvaluate = (cs: Candidate[]) =>
  cs.map((c) =>
    c.knobs![0] === 7 ? { candidate: c, errorKind: "runtime_error" as const } : {
      candidate: c,
      errorKind: "none" as const,
      seconds: mbCost(c.knobs!),
    }
  );

/** A model that learns nothing but knows the truth once it has seen 8 samples. */
export function oracle(): CostModel {
  let seen = 0;
  return {
    name: "oracle",
    update(s: Sample[]) {
      seen += s.length;
    },
    predict: (cs) => cs.map((c) => (seen >= 8 ? 1 / mbCost(c.knobs!) : 0)),
  };
}
