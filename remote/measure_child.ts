/**
 * The subprocess in which a worker builds and measures its jobs, so that
 * code generation, compiles and measurements never block the event loop that
 * renews the worker's BullMQ lock. Reads one request per line on stdin,
 * `{"id": N, "job": MeasureJob}`, measures it with the local measurer (one
 * per set of options, kept), and writes `{"id": N, "result": MeasureResult}`
 * or `{"id": N, "error": "..."}` on stdout. Started by `child.ts`.
 *
 * @example
 * ```ts ignore
 * // echo '{"id":1,"job":{...}}' | deno run -A remote/measure_child.ts
 * ```
 * @module
 */
import { readLines } from "../measure/lines.ts";
import type { Measurer } from "../measure/measurer.ts";
import { parseJob } from "./job.ts";
import { createLocalMeasurer } from "./local_measurer.ts";

if (import.meta.main) {
  const measurers = new Map<string, Measurer>();
  const out = Deno.stdout.writable.getWriter();
  const send = (v: unknown) => out.write(new TextEncoder().encode(JSON.stringify(v) + "\n"));
  for await (const line of readLines(Deno.stdin.readable)) {
    if (!line.trim()) continue;
    let id: unknown;
    try {
      const request = JSON.parse(line);
      id = request.id;
      const job = parseJob(request.job);
      const { cutoffSeconds, ...rest } = job.options;
      const key = JSON.stringify(rest);
      let m = measurers.get(key);
      if (!m) {
        m = createLocalMeasurer(rest);
        measurers.set(key, m);
      }
      const [result] = await m.measure([{ trace: job.trace }], { cutoffSeconds });
      await send({ id, result });
    } catch (e) {
      await send({ id, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
    }
  }
  for (const m of measurers.values()) await m.close?.();
}
