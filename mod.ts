/**
 * tunebook: automatic scheduling of tensor programs, notebook first.
 *
 * A workload (tensor expression) is lowered to loop nests; a design space
 * says which schedules exist; a strategy proposes candidates; the builder
 * compiles them to native code; the runner measures them in isolated
 * workers; the records database keeps every result.
 *
 * @example
 * ```ts
 * import { createPrng, createWorkload, defaultSpace, printTrace, randomSearch } from "./mod.ts";
 * const space = defaultSpace(createWorkload("matmul", [64, 64, 64]));
 * const [candidate] = randomSearch(space, { seed: 1 }).propose(1);
 * if (candidate.trace) console.log(printTrace(candidate.trace));
 * void createPrng;
 * ```
 * @module
 */
export * from "./ir/te.ts";
export * from "./ir/workloads.ts";
export { Schedule } from "./ir/schedule.ts";
export type { Inst, RV, ScheduleOptions } from "./ir/schedule.ts";
export { ScheduleError, TraceError } from "./ir/errors.ts";
export { createPrng, type Prng } from "./ir/prng.ts";
export * from "./ir/trace.ts";
export { lower } from "./ir/lower.ts";
export { generateC } from "./ir/codegen_c.ts";
export { evaluate } from "./ir/evaluate.ts";
export type { Candidate, Observation, Strategy } from "./search/strategy.ts";
export { type DesignSpace, type Sketch, traceSpace } from "./search/space.ts";
export { defaultSpace, sketchesOf, type SketchOptions } from "./search/sketch.ts";
export { randomSearch, type RandomSearchOptions } from "./search/random.ts";
export * from "./measure/mod.ts";
export * from "./datasets/mod.ts";
// The export with features and template knob spaces shadows the plain one of datasets/.
export { exportRecords, exportRows, TRAINING_EXPORT } from "./tuner/export.ts";
export { featureDescriber, PARQUET_FEATURE_COLUMNS } from "./costmodel/export.ts";
export { tune, type TuneOptions, type TuneOutcome } from "./tuner/loop.ts";
export { runSession, type SessionOptions, type Summary } from "./tuner/session.ts";
export { kernelSource, referenceSource, signatureOf } from "./measure/kernel_source.ts";
export { type Progress, progressLine } from "./tuner/progress.ts";
export * from "./ir/knobs.ts";
export {
  defaultTemplate,
  TEMPLATE_NAMES,
  type TemplateSpace,
  templateSpace,
} from "./search/templates/registry.ts";
export { mutate, verify } from "./search/mutators.ts";
export { evolutionaryTraceSearch } from "./search/evolutionary_traces.ts";
export {
  createStrategy,
  createTraceStrategy,
  KNOB_STRATEGY_NAMES,
  STRATEGIES,
  STRATEGY_NAMES,
  type StrategyContext,
  type StrategyEntry,
  strategyHelp,
  TRACE_STRATEGY_NAMES,
} from "./tuner/strategies.ts";
export { type ReplaySpace, replaySpace, replaySpaceFromFile } from "./search/replay.ts";
export { type CompareRow, compareRows, compareTable } from "./search/comparison.ts";
export {
  evaluatorMeasurer,
  type RunOptions,
  runStrategy,
  type RunTrace,
} from "./tuner/run_strategy.ts";
export { createNativeMeasurer, type NativeMeasurer } from "./measure/native.ts";
export { createReplayMeasurer, recordTable, type ReplayTable } from "./measure/replay.ts";
export type { Measurer, MeasureResult } from "./measure/measurer.ts";
export { type RecordStore, sqliteRecordStore } from "./datasets/record_store.ts";
export { createMemoryRecordStore } from "./datasets/memory_store.ts";
export { type FractionBand, fractionBand } from "./search/comparison.ts";
export { mean, median, quantile, type Summary as StatsSummary, summary } from "./ir/stats.ts";
export { compareFrame, runsFrame } from "./search/comparison_frame.ts";
/** Arquero, the data-frame library of tunebook's tables (`aq.from`, `aq.op`, `aq.desc`, ...). */
export * as aq from "npm:arquero@8.0.3";
export { modelBasedTuner } from "./search/model_based.ts";
export type { CostModel, Sample } from "./costmodel/model.ts";
export type { Matrix, Regressor } from "./costmodel/regressor.ts";
export { randomModel } from "./costmodel/random_model.ts";
export { type LearnedModel, learnedModel } from "./costmodel/learned.ts";
export { XGBoostRegressor } from "./costmodel/xgboost.ts";
export { MLPRegressor } from "./costmodel/mlp.ts";
export * from "./costmodel/features.ts";
export * from "./costmodel/metrics.ts";
export { bandCurveSVG, bestSoFar, svgToPNG, tuningCurveSVG } from "./plots/tuning_curve.ts";
export { scatterSVG } from "./plots/scatter.ts";
export { type RatioBar, type RatioBarsOptions, ratioBarsSVG } from "./plots/ratio_bars.ts";
export { bandCurveSpec, vegaLiteBundle, type VegaLiteSpec, vegaLiteSVG } from "./plots/vegalite.ts";
export { figureBundle, type FigureOptions } from "./plots/figure.ts";
export {
  displayCode,
  displayHTML,
  displayRecord,
  displaySVG,
  displayTrace,
  type FigureDisplay,
  htmlTable,
  inJupyter,
  JUPYTER_DISPLAY,
  type LiveProgress,
  liveProgress,
  type LiveProgressOptions,
  show,
  sparklineSVG,
} from "./tuner/jupyter.ts";
export {
  type HeatCell,
  heatmapCells,
  type HeatmapOptions,
  heatmapSVG,
  type HeatSample,
} from "./plots/heatmap.ts";
export { knobFeaturizer } from "./costmodel/featurizers.ts";
export { KERNELTUNER_CACHE_NAMES } from "./datasets/kerneltuner.ts";
export { generateCuda } from "./ir/codegen_cuda.ts";
export {
  type ActionSpace,
  type EnvObservation,
  type FeatureKind as EnvFeatureKind,
  type Formulation,
  type Measurement,
  type PendingStep,
  type RewardKind,
  ScheduleEnv,
  type ScheduleEnvOptions,
  type StartPolicy,
  type StepInfo,
  type StepResult,
} from "./rl/env.ts";
export {
  type ActOptions,
  type Agent,
  type AgentSpec,
  randomAgent,
  type Transition,
} from "./rl/agent.ts";
export { type PPOAgent, ppoAgent, type PPOOptions } from "./rl/ppo.ts";
export { type DQNAgent, dqnAgent, type DQNOptions } from "./rl/dqn.ts";
export { type LinUCBAgent, linUCBAgent, type LinUCBOptions, ppoBandit } from "./rl/bandit.ts";
export {
  type Episode,
  type EpisodeOptions,
  type EpisodeStats,
  runEpisode,
  type TrainOptions,
  type TuningTrace,
} from "./rl/train.ts";
export { trainAgent, type TrainRecords } from "./tuner/train.ts";
export { type AgentStrategy, agentStrategy, type AgentStrategyOptions } from "./rl/strategy.ts";
export { RL_STRATEGY_NAMES, rlStrategy } from "./rl/presets.ts";
export {
  type Layer,
  type LayerCurve,
  replayLayer,
  trainAcrossSpaces,
  type TransferOptions,
} from "./tuner/transfer.ts";
export { type LearningCurve, learningCurveSVG } from "./plots/rl_curve.ts";
export { BUILTIN_NETWORKS, builtinNetwork } from "./network/builtin.ts";
export { extractTasks, type Task, taskKey } from "./network/tasks.ts";
export { type EndToEnd, measureEndToEnd } from "./network/end_to_end.ts";
export { randomWeights } from "./network/weights.ts";
export {
  type SchedulerRound,
  scheduleTasks,
  TASK_SCHEDULERS,
  type TaskSchedulerName,
  warmStart,
} from "./tuner/task_scheduler.ts";
export {
  estimateCurve,
  type NetworkTuningOutcome,
  type TaskOutcome,
  tuneNetwork,
} from "./tuner/network_tuning.ts";
export {
  confirmedBest,
  FINALISTS_STRATEGY,
  finalistsOf,
  recordFinalists,
  retimeFinalists,
} from "./tuner/finalists.ts";
export { trialsToReach, trialsUsed } from "./tuner/trials_used.ts";
