/**
 * Tuning: the loop and the session of `tune`, the strategy table, spaces by
 * name (`openSpace`) and comparisons (`compareStrategies`), network tuning,
 * finalists, exports with features and the Jupyter display helpers.
 *
 * @example
 * ```ts
 * import { compareStrategies, openSpace } from "./mod.ts";
 * const space = await openSpace("pnpoly_RTX_3090");
 * const c = await compareStrategies(space, ["random", "sa"], { budgets: [10], seeds: 1 });
 * console.log(c.scoreOf);
 * ```
 * @module
 */
// The export with features and template knob spaces shadows the plain one of datasets/.
export { exportRecords, exportRows, TRAINING_EXPORT } from "./export.ts";
export { tune, type TuneOptions, type TuneOutcome } from "./loop.ts";
export { runSession, type SessionOptions, type Summary } from "./session.ts";
export { type OpenedSpace, openSpace, type OpenSpaceOptions } from "./open_space.ts";
export {
  compareStrategies,
  type CompareStrategiesOptions,
  type Comparison,
  type StrategyFactory,
} from "./compare_strategies.ts";
export { type Progress, progressLine } from "./progress.ts";
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
} from "./strategies.ts";
export { evaluatorMeasurer, type RunOptions, runStrategy, type RunTrace } from "./run_strategy.ts";
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
} from "./jupyter.ts";
export { trainAgent, type TrainRecords } from "./train.ts";
export {
  type Layer,
  type LayerCurve,
  replayLayer,
  trainAcrossSpaces,
  type TransferOptions,
} from "./transfer.ts";
export {
  type SchedulerRound,
  scheduleTasks,
  TASK_SCHEDULERS,
  type TaskSchedulerName,
  warmStart,
} from "./task_scheduler.ts";
export {
  estimateCurve,
  type NetworkTuningOutcome,
  type TaskOutcome,
  tuneNetwork,
} from "./network_tuning.ts";
export {
  confirmedBest,
  FINALISTS_STRATEGY,
  finalistsOf,
  recordFinalists,
  retimeFinalists,
} from "./finalists.ts";
export { trialsToReach, trialsUsed } from "./trials_used.ts";
export { isWorkloadSpec, nativeSpace, OpenSpaceError, transferSamples } from "./open_space.ts";
export type { RunEvent, RunJobRequest, StrategyChoice } from "./compare_strategies.ts";
// Types that the signatures above name.
export type { Broadcast, Displayable, MimeBundle, TableOptions } from "./jupyter.ts";
export type {
  Finalist,
  FinalistsRunInfo,
  FinalistsWriter,
  RecordedBest,
  RetimedFinalist,
} from "./finalists.ts";
export type { Hyperparameter } from "./strategies.ts";
export type { Measured, TuneTimings } from "./loop.ts";
export type { MeasurerConfig, RemoteMeasurement } from "./session.ts";
export type { NetworkTuningOptions } from "./network_tuning.ts";
export type { RecordedStart, ScheduleOutcome, TaskSchedulerOptions } from "./task_scheduler.ts";
export type { SchedulerTask, TaskRoundResult, TaskStart } from "./task_scheduler.ts";
export { rankingNoise, rankingOfResults, rankingOfStrategies } from "./ranking_noise.ts";
export type {
  RankedFigure,
  RankedResult,
  RankingNoise,
  RankingNoiseOptions,
} from "./ranking_noise.ts";
export { liveClock, liveRunTrace, timingOfResult } from "./compare_time.ts";
export type { ClockOptions } from "../search/tuning_time.ts";
