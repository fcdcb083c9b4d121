/**
 * Entry point of the CUDA measurement subprocess (the runner starts one per
 * request with `LD_LIBRARY_PATH` including the CUDA libraries, so a crashing
 * driver or kernel only costs that process):
 *
 * - `cuda_worker.ts probe ARTIFACT`: dlopens a built program, calls
 *   `tb_cuda_device_count` once and prints `{"count": n}` or
 *   `{"error": code, "message": "..."}`;
 * - `cuda_worker.ts reference`: reads one JSON {@link ReferenceRequest} on
 *   stdin, runs the C reference kernel on the seeded inputs and writes its
 *   outputs to the reference cache (`reference_cache.ts`); prints `{}`;
 * - `cuda_worker.ts run`: reads one JSON {@link CudaRequest} on stdin, reads
 *   the stored inputs and expected outputs, runs the candidate with `tb_cuda_measure` (the timing harness of
 *   `cuda_harness.ts`: NaN-filled outputs, a checked launch, then `number`
 *   launches per repeat), checks its output against the cached reference
 *   output and prints one JSON {@link CudaReply}.
 *
 * @module
 */
import { pointerTable } from "./buffers.ts";
import { compareOutputs } from "./output_check.ts";
import { CUDA_MEASURE_SYMBOLS } from "./cuda_harness.ts";
import {
  computeReference,
  readInputs,
  readReference,
  type ReferenceId,
  writeReference,
} from "./reference_cache.ts";
import type { ErrorKind, KernelSignature } from "./types.ts";

/** The one request of `cuda_worker.ts reference`. */
export interface ReferenceRequest extends ReferenceId {
  /** Where the outputs go (`referencePath`). */
  path: string;
}

/** The one request of `cuda_worker.ts run`. */
export interface CudaRequest {
  /** Shared object built from `generateCuda` output plus the timing harness. */
  artifact: string;
  /** File of the expected outputs (`reference_cache.ts`). */
  expected: string;
  signature: KernelSignature;
  seed: number;
  atol: number;
  rtol: number;
  /** Launches per repeat (grown until a repeat lasts `minRepeatMs`). */
  number: number;
  /** Timed repeats, after one checked launch. */
  repeat: number;
  /** Minimum milliseconds per repeat. */
  minRepeatMs: number;
  /** Overwrite a buffer of twice the L2 size before each repeat. */
  flushL2: boolean;
}

/** The reply of `cuda_worker.ts run`. */
export interface CudaReply {
  errorKind: ErrorKind;
  error?: string;
  /** Seconds per launch of the whole program, one per repeat. */
  times: number[];
  /** Launches per repeat after growing to `minRepeatMs`. */
  number?: number;
  /** Seconds of the output check (on the host, after the timed launches), when it ran. */
  verifySeconds?: number;
}

type CudaLibrary = Deno.DynamicLibrary<typeof CUDA_MEASURE_SYMBOLS>;
const PROBE_SYMBOLS = {
  tb_cuda_device_count: CUDA_MEASURE_SYMBOLS.tb_cuda_device_count,
  tb_cuda_error_string: CUDA_MEASURE_SYMBOLS.tb_cuda_error_string,
} as const;

function errorString(lib: Deno.DynamicLibrary<typeof PROBE_SYMBOLS>, code: number): string {
  const p = lib.symbols.tb_cuda_error_string(code);
  return p ? new Deno.UnsafePointerView(p).getCString() : `CUDA error ${code}`;
}

/** Probes the device count through a built program. */
export function probe(artifact: string): { count: number } | { error: number; message: string } {
  const lib = Deno.dlopen(artifact, PROBE_SYMBOLS);
  try {
    const n = lib.symbols.tb_cuda_device_count();
    return n >= 0 ? { count: n } : { error: -n, message: errorString(lib, -n) };
  } finally {
    lib.close();
  }
}

/** Computes and stores one reference output. */
export async function reference(req: ReferenceRequest): Promise<void> {
  await writeReference(req.path, req, computeReference(req));
}

/** Runs one request; never throws (failures become the reply's errorKind). */
export function run(req: CudaRequest): CudaReply {
  let lib: CudaLibrary | undefined;
  try {
    const expected = readReference(req.expected, req.signature);
    const buffers = readInputs(req.expected, req.signature);
    const roles = req.signature.buffers.map((b) => b.role);
    const outputs = buffers.filter((_, i) => roles[i] === "output");
    lib = Deno.dlopen(req.artifact, CUDA_MEASURE_SYMBOLS);
    const sizes = new BigInt64Array(req.signature.buffers.map((b) => BigInt(b.size)));
    const times = new Float64Array(Math.max(1, req.repeat));
    const number = new Int32Array(1);
    const code = lib.symbols.tb_cuda_measure(
      pointerTable(buffers),
      sizes,
      buffers.length,
      Math.max(1, req.number),
      req.repeat,
      req.minRepeatMs,
      req.flushL2 ? 1 : 0,
      times,
      number,
    );
    if (code !== 0) {
      return {
        errorKind: code === 35 || code === 100 ? "no_device" : "runtime_error",
        error: `tb_cuda_measure: ${errorString(lib, code)} (CUDA error ${code})`,
        times: [],
      };
    }
    const names = req.signature.buffers.filter((b) => b.role === "output").map((b) => b.name);
    const verifyStart = performance.now();
    const report = compareOutputs(
      outputs.map((got, i) => ({ name: names[i], got, expected: expected[i] })),
      req.atol,
      req.rtol,
    );
    const verifySeconds = (performance.now() - verifyStart) / 1000;
    if (report.bad > 0) {
      return { errorKind: "wrong_answer", error: report.message, times: [], verifySeconds };
    }
    return {
      errorKind: "none",
      times: Array.from(times.slice(0, req.repeat), (ms) => ms / 1000),
      number: number[0],
      verifySeconds,
    };
  } catch (e) {
    return { errorKind: "runtime_error", error: (e as Error).message ?? String(e), times: [] };
  } finally {
    lib?.close();
  }
}

async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

if (import.meta.main) {
  const [cmd, arg] = Deno.args;
  if (cmd === "probe") {
    let out: unknown;
    try {
      out = probe(arg);
    } catch (e) {
      out = { error: -1, message: (e as Error).message };
    }
    console.log(JSON.stringify(out));
  } else if (cmd === "reference") {
    await reference(JSON.parse(await readStdin()) as ReferenceRequest);
    console.log("{}");
  } else if (cmd === "run") {
    console.log(JSON.stringify(run(JSON.parse(await readStdin()) as CudaRequest)));
  } else {
    console.error("usage: cuda_worker.ts probe ARTIFACT | reference < req.json | run < req.json");
    Deno.exit(2);
  }
}
