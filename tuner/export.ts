/**
 * Export of a records database as training data, wired from every layer: the
 * rows of `datasets/export_rows.ts` and formats of `datasets/formats/`, the fixed features of
 * `costmodel/export.ts` and the knob spaces of the knob templates
 * (`search/templates/registry.ts`) for runs that store only a template name. This is
 * what `deno task export` writes and what mod.ts exports as `exportRecords`.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { RecordsDB } from "../datasets/db.ts";
 * import { importKernelTunerCache } from "../datasets/import.ts";
 * import { KERNELTUNER_DIR } from "../datasets/kerneltuner.ts";
 * import { exportRows } from "./export.ts";
 * const db = RecordsDB.open(":memory:");
 * await importKernelTunerCache(db, join(KERNELTUNER_DIR, "pnpoly_RTX_3090.json.gz"));
 * const rows = exportRows(db);
 * if (rows[0].feature_version !== "tb-features-2") throw new Error();
 * db.close();
 * ```
 * @module
 */
import { exportRecords as exportPlain, type ExportSummary } from "../datasets/export.ts";
import {
  type ExportOptions,
  type ExportRow,
  exportRows as exportPlainRows,
  type RowDescriber,
} from "../datasets/export_rows.ts";
import type { ExportFormat } from "../datasets/formats/registry.ts";
import type { RunRow, WorkloadRow } from "../datasets/db.ts";
import type { RecordsReader } from "../datasets/records_reader.ts";
import type { KnobSpace } from "../ir/knobs.ts";
import { createWorkload } from "../ir/workloads.ts";
import { featureDescriber } from "../costmodel/export.ts";
import { defaultTemplate, templateSpace } from "../search/templates/registry.ts";

/** The knob space of a run's knob template (its config's `template`, else its workload's default). */
export function templateSpaceOfRun(run: RunRow, w: WorkloadRow): KnobSpace | undefined {
  const workload = createWorkload(w.name, w.shape);
  const template = typeof run.config.template === "string"
    ? run.config.template
    : defaultTemplate(workload);
  return templateSpace(template, workload).space;
}

/** The describer of a training export: fixed features and template knob spaces. */
export const TRAINING_EXPORT: RowDescriber = featureDescriber(templateSpaceOfRun);

/** `datasets/export_rows.ts`'s `exportRows`, with features and template knob spaces by default. */
export function exportRows(db: RecordsReader, options: ExportOptions = {}): ExportRow[] {
  return exportPlainRows(db, { describe: TRAINING_EXPORT, ...options });
}

/** `datasets/export.ts`'s `exportRecords`, with features and template knob spaces by default. */
export function exportRecords(
  db: RecordsReader,
  format: ExportFormat,
  out: string,
  options: ExportOptions = {},
): Promise<ExportSummary> {
  return exportPlain(db, format, out, { describe: TRAINING_EXPORT, ...options });
}
