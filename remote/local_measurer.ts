/**
 * The measurer a worker runs jobs with: the native CPU path of the tuning
 * loop (trace -> C -> gcc -> the runner's contained worker processes, output
 * checked against the workload's reference kernel), behind the
 * {@link Measurer} protocol. Candidates carry traces; each trace names its
 * workload, whose reference kernel is built once.
 *
 * (The native `Measurer` of the one-loop issue, `measure/native.ts`, is to
 * replace this module once it lands.)
 *
 * @example
 * ```ts ignore
 * import { createLocalMeasurer } from "./local_measurer.ts";
 * const m = createLocalMeasurer({ timing: { repeat: 3 }, timeoutSeconds: 10, inputSeed: 0 });
 * const [r] = await m.measure([{ trace }]);
 * await m.close!();
 * ```
 * @module
 */
import { createWorkload } from "../ir/workloads.ts";
import type { Candidate } from "../ir/candidate.ts";
import { type Builder, createBuilder } from "../measure/builder.ts";
import type { MeasureBatchOptions, Measurer, MeasureResult } from "../measure/measurer.ts";
import { createRunner } from "../measure/runner.ts";
import type { MeasureInput, TimingOptions } from "../measure/types.ts";
import { kernelSource, referenceSource, signatureOf, toleranceOf } from "../tuner/kernel.ts";

/** Options of {@link createLocalMeasurer}. */
export interface LocalMeasurerOptions {
  timing?: Partial<TimingOptions>;
  /** Wall seconds a candidate's run may take. Default 10. */
  timeoutSeconds?: number;
  /** Seed of the measurement inputs. Default 0. */
  inputSeed?: number;
  /** Kernel cache directory. Default `$TUNEBOOK_CACHE`, else `.cache/kernels`. */
  cacheDir?: string;
}

/** A native CPU measurer of traces; see the module documentation. */
export function createLocalMeasurer(o: LocalMeasurerOptions = {}): Measurer & {
  builder: Builder;
} {
  const builder = createBuilder({ cacheDir: o.cacheDir ?? Deno.env.get("TUNEBOOK_CACHE") });
  const runner = createRunner({ timing: o.timing, timeoutSeconds: o.timeoutSeconds ?? 10 });
  const references = new Map<string, Promise<string>>();
  const referenceOf = (name: string, shape: number[]) => {
    const key = `${name}:${shape.join(",")}`;
    let r = references.get(key);
    if (!r) {
      r = builder.build([{ source: referenceSource(createWorkload(name, shape)) }]).then(([b]) => {
        if (b.errorKind !== "none" || !b.artifact) {
          throw new Error(`The reference kernel of ${key} did not build: ${b.error}`);
        }
        return b.artifact;
      });
      references.set(key, r);
    }
    return r;
  };
  return {
    name: "native-cpu",
    builder,
    async measure(batch: readonly Candidate[], options: MeasureBatchOptions = {}) {
      const results: (MeasureResult | undefined)[] = batch.map(() => undefined);
      const done = (i: number, r: MeasureResult) => {
        results[i] = r;
        options.onResult?.(i, r);
      };
      const toBuild: { i: number; source: string; tolerance?: { atol: number; rtol: number } }[] =
        [];
      batch.forEach((c, i) => {
        if (!c.trace) {
          throw new TypeError("The local measurer measures traces: a candidate has none");
        }
        let s;
        try {
          s = kernelSource(c.trace);
        } catch (e) {
          s = { error: `code generation failed: ${(e as Error).message}` };
        }
        if ("error" in s) {
          done(i, {
            errorKind: "instantiation_error",
            error: s.error,
            times: [],
            buildSeconds: 0,
            runSeconds: 0,
          });
        } else toBuild.push({ i, ...s });
      });
      const built = await builder.build(toBuild.map(({ source }) => ({ source })));
      const toRun: { i: number; buildSeconds: number; input: MeasureInput }[] = [];
      for (const [j, b] of built.entries()) {
        const { i, tolerance } = toBuild[j];
        if (b.errorKind !== "none") {
          done(i, {
            errorKind: b.errorKind,
            ...(b.error ? { error: b.error } : {}),
            times: [],
            buildSeconds: b.buildSeconds,
            runSeconds: 0,
          });
          continue;
        }
        const w = batch[i].trace!.workload;
        const workload = createWorkload(w.name, w.shape);
        const base = toleranceOf(workload);
        toRun.push({
          i,
          buildSeconds: b.buildSeconds,
          input: {
            artifact: b.artifact!,
            ...(b.symbol ? { symbol: b.symbol } : {}),
            reference: await referenceOf(w.name, w.shape),
            signature: signatureOf(workload),
            seed: o.inputSeed ?? 0,
            atol: Math.max(base.atol, tolerance?.atol ?? 0),
            rtol: Math.max(base.rtol, tolerance?.rtol ?? 0),
            ...(options.cutoffSeconds !== undefined
              ? { cutoffSeconds: options.cutoffSeconds }
              : {}),
          },
        });
      }
      await runner.run(toRun.map((t) => t.input), (j, r) => {
        done(toRun[j].i, {
          errorKind: r.errorKind,
          ...(r.error ? { error: r.error } : {}),
          times: r.times,
          buildSeconds: toRun[j].buildSeconds,
          runSeconds: r.runSeconds,
        });
      });
      return results as MeasureResult[];
    },
    close: () => runner.close(),
  };
}
