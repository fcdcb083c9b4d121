/**
 * Cost models: features of candidates, regressors (XGBoost, MLP), the
 * learned and random models and the ranking metrics.
 *
 * @example
 * ```ts
 * import { evaluateRanking } from "./mod.ts";
 * console.log(evaluateRanking([1, 2, 3], [1, 2, 3]));
 * ```
 * @module
 */
export { featureDescriber, PARQUET_FEATURE_COLUMNS } from "./export.ts";
export type { CostModel, Sample } from "./model.ts";
export type { Matrix, Regressor } from "./regressor.ts";
export { randomModel } from "./random_model.ts";
export { type LearnedModel, learnedModel } from "./learned.ts";
export { XGBoostRegressor } from "./xgboost.ts";
export { MLPRegressor } from "./mlp.ts";
export * from "./features.ts";
export * from "./metrics.ts";
export { knobFeaturizer } from "./featurizers.ts";
// Types that the signatures above name.
export type { Featurizer, LearnedModelOptions } from "./learned.ts";
export type { FitOptions } from "./regressor.ts";
export type { MLPFile, MLPOptions } from "./mlp.ts";
export type { ResolvedXGBoostOptions } from "./xgboost.ts";
export type { MLPActivation, MLPLoss } from "./mlp.ts";
export type { XGBoostOptions } from "./xgboost.ts";
export type { XGBoostObjective } from "./xgboost.ts";
