/**
 * Entry point of the CUDA measurement subprocess (the runner starts one per
 * request with `LD_LIBRARY_PATH` including the CUDA libraries, so a crashing
 * driver or kernel only costs that process):
 *
 * - `cuda_worker.ts probe ARTIFACT`: dlopens a built program, calls
 *   `tb_cuda_device_count` once and prints `{"count": n}` or
 *   `{"error": code, "message": "..."}`;
 * - `cuda_worker.ts run`: reads one JSON {@link CudaRequest} on stdin, computes
 *   the reference output with the C reference kernel, runs the candidate
 *   with `tb_cuda_run`, checks its output and prints one JSON reply
 *   (`errorKind`, `error`, `times` in seconds per repeat).
 *
 * @module
 */
import { alignedFloat32, pointerTable } from "./buffers.ts";
import { compareOutputs } from "./compare.ts";
import { fillUniform } from "./prng.ts";
import type { ErrorKind, KernelSignature } from "./types.ts";

/** The one request of `cuda_worker.ts run`. */
export interface CudaRequest {
  /** Shared object built from `generateCuda` output. */
  artifact: string;
  /** Shared object of the C reference kernel (`tb_kernel`). */
  reference: string;
  signature: KernelSignature;
  seed: number;
  atol: number;
  rtol: number;
  /** Timed repeats (CUDA events), after one checked warm-up launch. */
  repeat: number;
}

/** The reply of `cuda_worker.ts run`. */
export interface CudaReply {
  errorKind: ErrorKind;
  error?: string;
  /** Seconds per launch of the whole program, one per repeat. */
  times: number[];
}

const CUDA_SYMBOLS = {
  tb_cuda_device_count: { parameters: [], result: "i32" },
  tb_cuda_error_string: { parameters: ["i32"], result: "pointer" },
  tb_cuda_run: { parameters: ["buffer", "buffer", "i32", "i32", "buffer"], result: "i32" },
} as const;

type CudaLibrary = Deno.DynamicLibrary<typeof CUDA_SYMBOLS>;

function errorString(lib: CudaLibrary, code: number): string {
  const p = lib.symbols.tb_cuda_error_string(code);
  return p ? new Deno.UnsafePointerView(p).getCString() : `CUDA error ${code}`;
}

/** Probes the device count through a built program. */
export function probe(artifact: string): { count: number } | { error: number; message: string } {
  const lib = Deno.dlopen(artifact, CUDA_SYMBOLS);
  try {
    const n = lib.symbols.tb_cuda_device_count();
    return n >= 0 ? { count: n } : { error: -n, message: errorString(lib, -n) };
  } finally {
    lib.close();
  }
}

/** Runs one request; never throws (failures become the reply's errorKind). */
export function run(req: CudaRequest): CudaReply {
  let lib: CudaLibrary | undefined;
  try {
    const buffers = req.signature.buffers.map((b) => alignedFloat32(b.size));
    const roles = req.signature.buffers.map((b) => b.role);
    const inputs = buffers.filter((_, i) => roles[i] === "input");
    fillUniform(req.seed, inputs);
    const ref = Deno.dlopen(req.reference, {
      tb_kernel: { parameters: ["buffer"], result: "void" },
    });
    try {
      ref.symbols.tb_kernel(pointerTable(buffers));
    } finally {
      ref.close();
    }
    const expected = buffers.filter((_, i) => roles[i] === "output").map((b) => b.slice());
    const outputs = buffers.filter((_, i) => roles[i] === "output");
    outputs.forEach((b) => b.fill(NaN));
    lib = Deno.dlopen(req.artifact, CUDA_SYMBOLS);
    const sizes = new BigInt64Array(req.signature.buffers.map((b) => BigInt(b.size)));
    const times = new Float64Array(Math.max(1, req.repeat));
    const code = lib.symbols.tb_cuda_run(
      pointerTable(buffers),
      sizes,
      buffers.length,
      req.repeat,
      times,
    );
    if (code !== 0) {
      return {
        errorKind: code === 35 || code === 100 ? "no_device" : "runtime_error",
        error: `tb_cuda_run: ${errorString(lib, code)} (CUDA error ${code})`,
        times: [],
      };
    }
    const names = req.signature.buffers.filter((b) => b.role === "output").map((b) => b.name);
    const report = compareOutputs(
      outputs.map((got, i) => ({ name: names[i], got, expected: expected[i] })),
      req.atol,
      req.rtol,
    );
    if (report.bad > 0) return { errorKind: "wrong_answer", error: report.message, times: [] };
    return { errorKind: "none", times: Array.from(times.slice(0, req.repeat), (ms) => ms / 1000) };
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
  } else if (cmd === "run") {
    console.log(JSON.stringify(run(JSON.parse(await readStdin()) as CudaRequest)));
  } else {
    console.error("usage: cuda_worker.ts probe ARTIFACT | run < request.json");
    Deno.exit(2);
  }
}
