/**
 * The featurizing step of an export: a {@link RowDescriber} that gives every
 * exported candidate tunebook's fixed features ({@link fixedFeatures}, in
 * {@link FIXED_FEATURE_NAMES} order, version {@link FEATURE_VERSION}), so an
 * exported data set trains a cost model as is. The records (`datasets/`) know
 * nothing of features; this module plugs them in from above.
 *
 * @example
 * ```ts
 * import { featureDescriber } from "./export.ts";
 * import { FIXED_FEATURE_NAMES } from "./features.ts";
 * const d = featureDescriber();
 * if (d.featureNames.length !== FIXED_FEATURE_NAMES.length) throw new Error();
 * if (d.features("not a trace") !== null) throw new Error();
 * ```
 * @module
 */
import type { RowDescriber } from "../datasets/export_rows.ts";
import { parseTrace } from "../ir/trace.ts";
import { FEATURE_VERSION, FIXED_FEATURE_NAMES, fixedFeatures } from "./features.ts";

/**
 * The describer of a training export: fixed features of each stored trace
 * (null when it does not parse, replay or lower), and `knobSpace` (the knob
 * space of a run that declares none) when given.
 */
export function featureDescriber(knobSpace?: RowDescriber["knobSpace"]): RowDescriber {
  return {
    featureVersion: FEATURE_VERSION,
    featureNames: FIXED_FEATURE_NAMES,
    features(trace) {
      try {
        return fixedFeatures(parseTrace(trace));
      } catch {
        return null;
      }
    },
    ...(knobSpace ? { knobSpace } : {}),
  };
}

/** Names of the Parquet feature columns of a training export: `feature.<name>` per fixed feature. */
export const PARQUET_FEATURE_COLUMNS: readonly string[] = Object.freeze(
  FIXED_FEATURE_NAMES.map((n) => `feature.${n}`),
);
