/**
 * tunebook: automatic scheduling of tensor programs, notebook first.
 *
 * A workload (tensor expression) is lowered to loop nests; a design space
 * says which schedules exist; a strategy proposes candidates; the builder
 * compiles them to native code; the runner measures them in isolated
 * workers; the records database keeps every result.
 *
 * This root module is the notebook surface: the names the notebooks and a
 * researcher's script need (workloads, spaces, tuning, comparisons,
 * strategies by name, records, plots, export). Everything else is in the
 * folder modules, one per layer: `tunebook/ir`, `/search`, `/measure`,
 * `/datasets`, `/costmodel`, `/tuner`, `/rl`, `/network`, `/plots`
 * (`<clone>/ir/mod.ts` and so on by path). It re-exports no third-party
 * library: import arquero as `npm:arquero@8.0.3` for the tables' verbs.
 *
 * @example
 * ```ts
 * import { compareStrategies, openSpace, tuningCurveSVG } from "./mod.ts";
 * const space = await openSpace("pnpoly_RTX_3090");
 * const c = await compareStrategies(space, ["random", "sa"], { budgets: [10, 20], seeds: 2 });
 * const curve = (label: string) => ({
 *   label,
 *   values: c.traces.get(label)![0].best.map((b) => c.optimum / b),
 * });
 * if (!tuningCurveSVG([curve("random"), curve("sa")]).startsWith("<svg")) throw new Error();
 * ```
 * @module
 */
// Workloads and programs (ir/).
export { createWorkload, matmul, type Workload, WORKLOADS } from "./ir/workloads.ts";
export { Schedule } from "./ir/schedule.ts";
export { parseTrace, printTrace, type Trace, traceOf } from "./ir/trace.ts";
export { lower } from "./ir/lower.ts";
export { generateCuda } from "./ir/codegen_cuda.ts";
export { createPrng } from "./ir/prng.ts";
export { DEFAULTS } from "./ir/defaults.ts";
// Spaces and strategies (search/, tuner/).
export type { Strategy } from "./search/strategy.ts";
export { defaultSpace } from "./search/sketch.ts";
export { templateSpace } from "./search/templates/registry.ts";
export { replaySpaceFromFile } from "./search/replay.ts";
export { ALL_CACHE_NAMES, KERNELTUNER_CACHE_NAMES } from "./datasets/cache_names.ts";
export { createStrategy, STRATEGY_NAMES } from "./tuner/strategies.ts";
export { fractionBand, type RunTrace } from "./search/comparison.ts";
export { compareFrame, runsFrame } from "./search/comparison_frame.ts";
// Tuning and comparing (tuner/).
export { runSession } from "./tuner/session.ts";
export { tune } from "./tuner/loop.ts";
export { type OpenedSpace, openSpace } from "./tuner/open_space.ts";
export { compareStrategies, type Comparison } from "./tuner/compare_strategies.ts";
export { trialsUsed } from "./tuner/trials_used.ts";
// Measuring (measure/).
export type { Measurer } from "./measure/measurer.ts";
export { createNativeMeasurer } from "./measure/native.ts";
// Records (datasets/).
export { RecordsDB } from "./datasets/db.ts";
export { type RecordStore, sqliteRecordStore } from "./datasets/record_store.ts";
export { createMemoryRecordStore } from "./datasets/memory_store.ts";
export { runTable } from "./datasets/tables.ts";
export { exportRecords } from "./tuner/export.ts";
// Cost models (costmodel/).
export { XGBoostRegressor } from "./costmodel/xgboost.ts";
export { knobFeaturizer } from "./costmodel/featurizers.ts";
export { evaluateRanking } from "./costmodel/metrics.ts";
// Reinforcement learning (rl/, tuner/).
export { ScheduleEnv } from "./rl/env.ts";
export { randomAgent } from "./rl/agent.ts";
export { ppoAgent } from "./rl/ppo.ts";
export { dqnAgent } from "./rl/dqn.ts";
export { runEpisode } from "./rl/train.ts";
export { agentStrategy } from "./rl/strategy.ts";
export { replayLayer, trainAcrossSpaces } from "./tuner/transfer.ts";
// Networks (network/, tuner/).
export { builtinNetwork } from "./network/builtin.ts";
export { extractTasks } from "./network/tasks.ts";
export { measureEndToEnd } from "./network/end_to_end.ts";
export { randomWeights } from "./network/weights.ts";
export { estimateCurve, tuneNetwork } from "./tuner/network_tuning.ts";
// Plots and notebooks (plots/, tuner/jupyter.ts).
export { bandCurveSVG, bestSoFar, svgToPNG, tuningCurveSVG } from "./plots/tuning_curve.ts";
export { scatterSVG } from "./plots/scatter.ts";
export { heatmapSVG } from "./plots/heatmap.ts";
export { learningCurveSVG } from "./plots/rl_curve.ts";
export {
  displayCode,
  displayRecord,
  displayTrace,
  htmlTable,
  liveProgress,
  show,
} from "./tuner/jupyter.ts";
