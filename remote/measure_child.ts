/**
 * The subprocess in which a worker builds and measures its jobs, so that
 * code generation, compiles and measurements never block the event loop that
 * renews the worker's BullMQ lock. Reads one request per line on stdin,
 * `{"id": N, "kind": "measure", "job": MeasureJob}`, measures it with the native measurer
 * (`measure/native.ts`: one per workload and options, one builder and one
 * runner per options, kept), and writes `{"id": N, "result": MeasureResult}`
 * or `{"id": N, "error": "..."}` on stdout; a `"run"` request runs a whole
 * strategy run on a replayed cache (`run_job.ts`). Started by `child.ts`.
 *
 * @example
 * ```ts ignore
 * // echo '{"id":1,"job":{...}}' | deno run -A remote/measure_child.ts
 * ```
 * @module
 */
import { createWorkload } from "../ir/workloads.ts";
import { createBuilder } from "../measure/builder.ts";
import { readLines } from "../measure/lines.ts";
import type { Measurer } from "../measure/measurer.ts";
import { createNativeMeasurer } from "../measure/native.ts";
import { createRunner, type Runner } from "../measure/runner.ts";
import { parseJob } from "./job.ts";
import { executeRunJob, parseRunJob } from "./run_job.ts";

if (import.meta.main) {
  const builder = createBuilder({ cacheDir: Deno.env.get("TUNEBOOK_CACHE") });
  const runners = new Map<string, Runner>();
  const measurers = new Map<string, Measurer>();
  const out = Deno.stdout.writable.getWriter();
  const send = (v: unknown) => out.write(new TextEncoder().encode(JSON.stringify(v) + "\n"));
  for await (const line of readLines(Deno.stdin.readable)) {
    if (!line.trim()) continue;
    let id: unknown;
    try {
      const request = JSON.parse(line);
      id = request.id;
      if (request.kind === "run") {
        await send({ id, result: await executeRunJob(parseRunJob(request.job).run) });
        continue;
      }
      const job = parseJob(request.job);
      const { timing, timeoutSeconds, inputSeed, cutoffSeconds } = job.options;
      const runKey = JSON.stringify([timing, timeoutSeconds]);
      let runner = runners.get(runKey);
      if (!runner) {
        runner = createRunner({ timing, timeoutSeconds });
        runners.set(runKey, runner);
      }
      const w = job.trace.workload;
      const key = JSON.stringify([w.name, w.shape, inputSeed, runKey]);
      let m = measurers.get(key);
      if (!m) {
        m = createNativeMeasurer({
          workload: createWorkload(w.name, w.shape),
          builder,
          runner,
          inputSeed,
          closeRunner: false,
        });
        measurers.set(key, m);
      }
      const [result] = await m.measure([{ trace: job.trace }], { cutoffSeconds });
      await send({ id, result });
    } catch (e) {
      await send({ id, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
    }
  }
  for (const m of measurers.values()) await m.close?.();
  for (const r of runners.values()) await r.close();
}
