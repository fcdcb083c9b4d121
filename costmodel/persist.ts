/**
 * Saving and loading learned cost models with the feature version they
 * were trained on: a directory holding the learner's own model file and
 * `meta.json` (`{ format, name, regressor, featureKind, featureVersion,
 * samples }`). Loading a model trained on another feature version is an
 * error that says so, never a silent mismatch.
 * @module
 */
import { join } from "node:path";
import { FEATURE_VERSION } from "./features.ts";
import { type Featurizer, type LearnedModel, learnedModel } from "./learned.ts";
import { MLPRegressor } from "./mlp.ts";
import type { Regressor } from "./regressor.ts";
import { XGBoostRegressor } from "./xgboost.ts";

/** What `meta.json` holds. */
export interface ModelMeta {
  format: "tunebook-costmodel-1";
  /** Model name, e.g. `"xgb-rank"`. */
  name: string;
  /** Learner: `"xgb"`, `"xgb-rank"`, `"mlp"` or `"mlp-rank"`. */
  regressor: string;
  /** Which features: `"knob"`, `"loop"` or `"fixed"`. */
  featureKind: string;
  /** {@link FEATURE_VERSION} at training time. */
  featureVersion: string;
  /** Samples trained on. */
  samples: number;
}

/** Writes a trained regressor and its metadata into `dir`. */
export async function saveModel(
  dir: string,
  regressor: Regressor,
  meta: Omit<ModelMeta, "format" | "featureVersion" | "regressor">,
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const file = regressor.name.startsWith("xgb") ? "model.json" : "mlp.json";
  await regressor.save(join(dir, file));
  const full: ModelMeta = {
    format: "tunebook-costmodel-1",
    regressor: regressor.name,
    featureVersion: FEATURE_VERSION,
    ...meta,
  };
  await Deno.writeTextFile(join(dir, "meta.json"), JSON.stringify(full, null, 2) + "\n");
}

/**
 * Loads a saved model as a cost model over `features` (which must be the
 * same kind of features it was trained on). Throws when the feature
 * version differs from this tunebook's.
 */
export async function loadModel(
  dir: string,
  features: Featurizer,
): Promise<LearnedModel & { meta: ModelMeta }> {
  const meta = JSON.parse(await Deno.readTextFile(join(dir, "meta.json"))) as ModelMeta;
  if (meta.format !== "tunebook-costmodel-1") {
    throw new TypeError(`${dir}/meta.json is not a tunebook cost model (format ${meta.format})`);
  }
  if (meta.featureVersion !== FEATURE_VERSION) {
    throw new RangeError(
      `Model in ${dir} was trained on features ${meta.featureVersion}; this tunebook computes ${FEATURE_VERSION}: retrain it`,
    );
  }
  const regressor: Regressor = meta.regressor.startsWith("xgb")
    ? XGBoostRegressor.load(join(dir, "model.json"))
    : await MLPRegressor.load(join(dir, "mlp.json"));
  // A loaded model is frozen: it predicts, and updates do not retrain it.
  const model = learnedModel({
    name: meta.name,
    regressor,
    features,
    minSamples: Infinity,
    fitted: true,
  });
  return Object.assign(model, { meta });
}
