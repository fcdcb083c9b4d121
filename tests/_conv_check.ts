/**
 * Shared by the convolution template tests: a template point's C source
 * beside the naive kernel's, and a check that its builds (native, with
 * AVX-512 where the machine has it, and portable x86-64; 16 and 8 floats a
 * vector) compute the naive output.
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { generateC } from "../ir/codegen_c.ts";
import { lower } from "../ir/lower.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { replayTrace } from "../ir/trace.ts";
import { createWorkload } from "../ir/workloads.ts";
import {
  createBuilder,
  createRunner,
  DEFAULT_FLAGS,
  type KernelSignature,
} from "../measure/mod.ts";
import { templateSpace } from "../search/templates/registry.ts";

const CACHE_DIR = fileURLToPath(new URL("../.cache/test-kernels", import.meta.url));

/** A candidate's schedule and source, the naive kernel's source and their buffers. */
export interface TemplateSource {
  schedule: Schedule;
  source: string;
  naive: string;
  signature: KernelSignature;
}

/** The C source of a convolution template at the point given by knob values (first option when absent). */
export function templateSource(
  template: string,
  shape: number[],
  values: Record<string, unknown>,
  workload = "conv2d",
): TemplateSource {
  const w = createWorkload(workload, shape);
  const t = templateSpace(template, w);
  const point = t.space.knobs.map((k) => k.options.indexOf(values[k.name] ?? k.options[0]));
  const sch = replayTrace(t.candidateOf(point).trace!, { prng: createPrng(0) });
  const naive = lower(new Schedule(w, { prng: createPrng(0) }));
  return {
    schedule: sch,
    source: generateC(lower(sch), { lanes: 16 }),
    naive: generateC(naive),
    signature: {
      buffers: naive.params.map((p) => ({ name: p.tensor, size: p.size, role: p.role })),
    },
  };
}

/**
 * Builds the source for this machine and for plain x86-64, and its 8-lane
 * twin for this machine; all must compute the naive output.
 */
export async function checkBothTargets(
  { schedule, source, naive, signature }: TemplateSource,
): Promise<void> {
  const portable = DEFAULT_FLAGS.map((f) => f === "-march=native" ? "-march=x86-64" : f);
  const native = createBuilder({ cacheDir: CACHE_DIR, parallel: 2 });
  const plain = createBuilder({ cacheDir: CACHE_DIR, parallel: 2, flags: portable });
  const narrow = generateC(lower(schedule), { lanes: 8 });
  const [[ref, fast, eight], [slow]] = await Promise.all([
    native.build([{ source: naive }, { source }, { source: narrow }]),
    plain.build([{ source }]),
  ]);
  for (const b of [ref, fast, eight, slow]) assert.equal(b.errorKind, "none", b.error ?? "");
  const runner = createRunner({
    workers: 1,
    timeoutSeconds: 20,
    timing: { number: 1, repeat: 1, warmup: 0, minRepeatMs: 0 },
  });
  try {
    const results = await runner.run([fast, eight, slow].map((b) => ({
      artifact: b.artifact!,
      reference: ref.artifact!,
      signature,
      seed: 3,
      atol: 1e-4,
      rtol: 1e-4,
    })));
    for (const r of results) assert.equal(r.errorKind, "none", r.error ?? "");
  } finally {
    await runner.close();
  }
}
