/**
 * Design spaces and search: sketches and trace spaces, knob spaces and their
 * templates, replayed Kernel Tuner caches, the search strategies and the
 * tabulation of a comparison.
 *
 * @example
 * ```ts
 * import { defaultSpace, randomSearch } from "./mod.ts";
 * import { createWorkload } from "../ir/mod.ts";
 * const space = defaultSpace(createWorkload("matmul", [64, 64, 64]));
 * const [c] = randomSearch(space, { seed: 1 }).propose(1);
 * console.log(c.trace !== undefined);
 * ```
 * @module
 */
export type { Candidate, Observation, Strategy } from "./strategy.ts";
export { type DesignSpace, type Sketch, traceSpace } from "./space.ts";
export { defaultSpace, sketchesOf, type SketchOptions } from "./sketch.ts";
export { randomSearch, type RandomSearchOptions } from "./random.ts";
export * from "../ir/knobs.ts";
export {
  defaultTemplate,
  TEMPLATE_NAMES,
  type TemplateSpace,
  templateSpace,
} from "./templates/registry.ts";
export { mutate, verify } from "./mutators.ts";
export { evolutionaryTraceSearch } from "./evolutionary_traces.ts";
export { type ReplaySpace, replaySpace, replaySpaceFromFile } from "./replay.ts";
export { type CompareRow, compareRows, compareTable } from "./comparison.ts";
export { type FractionBand, fractionBand } from "./comparison.ts";
export { compareFrame, runsFrame } from "./comparison_frame.ts";
export { modelBasedTuner } from "./model_based.ts";
export { ALL_SPACES, type ReplayOptions } from "./replay.ts";
export {
  type CompareOutput,
  fractionAt,
  fractionOverWall,
  type ReachRow,
  reachRows,
  reachTable,
} from "./comparison.ts";
export { budgetScore, expectedRandomFraction, meanCurve, rankAcrossSpaces } from "./score.ts";
// Types that the signatures above name.
export type { CandidateOf } from "../ir/candidate.ts";
export type { Evaluator } from "./comparison.ts";
export type { EvolutionaryTraceOptions } from "./evolutionary_traces.ts";
export type { ModelBasedOptions } from "./model_based.ts";
export type { RankRow } from "./score.ts";
export type { ReplayResult } from "./replay.ts";
export type { ValidityModel } from "./validity.ts";
