/**
 * Entry point of a measurement worker process:
 * `deno run --allow-read --allow-ffi --allow-env measure/cpu_worker.ts [LIMITS]`,
 * `LIMITS` the JSON of a {@link WorkerLimits} the worker applies to itself
 * before it says it is ready (see `containment.ts`).
 *
 * Speaks JSON lines: writes {@link WORKER_READY}, then reads one
 * {@link WorkerRequest} per stdin line and writes one {@link WorkerReply} per
 * stdout line, preceded by a {@link WorkerProgress} line once the reference
 * output is ready (see `protocol.ts`). A bad request gets an error reply; the worker never exits on
 * one. It exits when stdin closes.
 *
 * @module
 */

import { applyLimits, limitCpuTime, type WorkerLimits } from "./containment.ts";
import { readLines } from "./lines.ts";
import { Measurer } from "./measurement.ts";
import { checkRequest, referenceReadyLine, WORKER_READY, type WorkerReply } from "./protocol.ts";

const encoder = new TextEncoder();

function writeLine(text: string): void {
  const bytes = encoder.encode(`${text}\n`);
  let written = 0;
  while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
}

function handle(measurer: Measurer, line: string): WorkerReply {
  let id: number | null = null;
  try {
    const parsed = JSON.parse(line);
    if (typeof parsed?.id === "number") id = parsed.id;
    const request = checkRequest(parsed);
    return measurer.measure(request, () => writeLine(referenceReadyLine(request.id)));
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    return { id, errorKind: "runtime_error", error, times: [], runSeconds: 0 };
  }
}

/**
 * Loads the OpenMP runtime for the worker's lifetime. Kernels built with
 * -fopenmp leave libgomp's thread pool running; if closing a kernel's shared
 * object unloaded libgomp with it, those threads would crash the worker.
 */
export function pinOpenMP(): void {
  try {
    Deno.dlopen("libgomp.so.1", { omp_get_max_threads: { parameters: [], result: "i32" } });
  } catch {
    // No OpenMP runtime: kernels are then built without it, nothing to pin.
  }
}

/** Serves requests from stdin until it closes, within `limits`. */
export async function serve(limits: WorkerLimits = {}): Promise<void> {
  pinOpenMP();
  for (const missed of applyLimits(limits)) console.error(`worker not contained: ${missed}`);
  const measurer = new Measurer();
  writeLine(WORKER_READY);
  try {
    for await (const line of readLines(Deno.stdin.readable)) {
      if (line.trim() === "") continue;
      if (limits.cpuSecondsPerRequest !== undefined) {
        try {
          limitCpuTime(limits.cpuSecondsPerRequest);
        } catch {
          // Reported as the other limits are: without FFI to libc, none applies.
        }
      }
      writeLine(JSON.stringify(handle(measurer, line)));
    }
  } finally {
    measurer.close();
  }
}

if (import.meta.main) await serve(Deno.args[0] ? JSON.parse(Deno.args[0]) : {});
