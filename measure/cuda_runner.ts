/**
 * The CUDA runner: measures programs built by the nvcc builder, each in a
 * fresh subprocess (`cuda_worker.ts`) with a time limit and
 * `LD_LIBRARY_PATH` including the CUDA libraries.
 *
 * Before the first measurement it asks the runtime, once, how many devices
 * there are (`tb_cuda_device_count` of the first artifact). Without a driver
 * or a device, every request of every batch gets errorKind `"no_device"` and
 * the same message, e.g. `no CUDA driver (cudaErrorInsufficientDriver, 35):
 * CUDA driver version is insufficient for CUDA runtime version`, and nothing
 * is run: no crash, one clear error. {@link CudaRunner.device} gives that
 * status to callers that stop on it.
 *
 * With a device, each program runs once on NaN-filled outputs and is checked
 * against the reference output for its seed, which the C reference kernel
 * computes once per (workload, shape, seed) and the runner keeps on disk
 * (`reference_cache.ts`); then it is timed with CUDA events as TVM's time
 * evaluator does (`number` launches per repeat, grown until a repeat lasts
 * `minRepeatMs`; `repeat` repeats; optionally an L2 flush before each).
 * A program already measured by this runner (the same artifact: nvcc built
 * identical CUDA from another trace) is not measured again: its result is
 * copied, with a message naming the program it repeats.
 *
 * @module
 */
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { childDenoArgs } from "./deno_child.ts";
import { exists } from "./builder.ts";
import { referencePath } from "./reference_cache.ts";
import type { Runner } from "./runner.ts";
import { outputWithin } from "./subprocess.ts";
import type { MeasureInput, RunResult } from "./types.ts";
import type { CudaReply, CudaRequest, ReferenceRequest } from "./cuda_worker.ts";

/** Absolute path of the CUDA worker entry point. */
export const CUDA_WORKER_PATH: string = fileURLToPath(
  new URL("./cuda_worker.ts", import.meta.url),
);

/** Where the CUDA runtime libraries are looked for (added to `LD_LIBRARY_PATH`). */
export const CUDA_LIBRARY_DIRS: readonly string[] = ["/usr/local/cuda/lib64"];

/** What the device probe found. */
export interface CudaDeviceStatus {
  /** True when at least one device answered. */
  ok: boolean;
  /** Devices found (0 when none or no driver). */
  count: number;
  /** The runtime's error code when it could not count devices (35: no driver). */
  code?: number;
  /** One line for the user, e.g. `"no CUDA device"`. */
  message: string;
}

/** Options of {@link createCudaRunner}. */
export interface CudaRunnerOptions {
  /** Launches per repeat (grown until a repeat lasts `minRepeatMs`). Default 1. */
  number?: number;
  /** Timed repeats per program. Default 3. */
  repeat?: number;
  /** Minimum milliseconds per repeat. Default 0. */
  minRepeatMs?: number;
  /** Overwrite a buffer of twice the L2 size (untimed) before each repeat. Default false. */
  flushL2?: boolean;
  /** Wall seconds one measurement (subprocess) may take. Default 30. */
  timeoutSeconds?: number;
  /** Where reference outputs are kept. Default `.cache/reference` under `Deno.cwd()`. */
  referenceDir?: string;
  /** Wall seconds computing one reference output may take (once per seed). Default 900. */
  referenceTimeoutSeconds?: number;
}

/** A {@link Runner} of CUDA programs with the device status it found. */
export interface CudaRunner extends Runner {
  /** The probe's result (probing with `artifact` if nothing was probed yet). */
  device(artifact?: string): Promise<CudaDeviceStatus | undefined>;
}

/** The message of a failed device count, by cudaError_t. */
export function deviceMessage(code: number, runtimeText: string): string {
  if (code === 35) return `no CUDA driver (cudaErrorInsufficientDriver, 35): ${runtimeText}`;
  if (code === 100) return `no CUDA device (cudaErrorNoDevice, 100): ${runtimeText}`;
  if (code === 34) return `no CUDA driver (cudaErrorStubLibrary, 34): ${runtimeText}`;
  return `CUDA runtime unusable (error ${code}): ${runtimeText}`;
}

function libraryPath(): string {
  const old = Deno.env.get("LD_LIBRARY_PATH");
  return [...CUDA_LIBRARY_DIRS, ...(old ? [old] : [])].join(":");
}

/** Runs the worker with `args` (and `stdin` text), killed after `timeoutSeconds`. */
async function worker(
  args: string[],
  stdin: string | undefined,
  timeoutSeconds: number,
  env: Record<string, string> = {},
): Promise<{ ok: true; value: unknown } | { ok: false; error: string; timedOut: boolean }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: childDenoArgs(CUDA_WORKER_PATH, args, { write: true }),
    env: { LD_LIBRARY_PATH: libraryPath(), ...env },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  let timedOut = false;
  try {
    const waited = await outputWithin(child, timeoutSeconds);
    const out = waited.output;
    timedOut = waited.timedOut;
    const text = new TextDecoder().decode(out.stdout).trim().split("\n").pop() ?? "";
    if (timedOut) return { ok: false, error: `no result within ${timeoutSeconds} s`, timedOut };
    if (!out.success) {
      const status = out.signal ? `killed by signal ${out.signal}` : `exited with code ${out.code}`;
      const err = new TextDecoder().decode(out.stderr).trim().slice(-2000);
      return { ok: false, error: `CUDA worker ${status}${err ? `: ${err}` : ""}`, timedOut };
    }
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, error: (e as Error).message, timedOut };
  }
}

/** Creates a {@link CudaRunner}; see {@link CudaRunnerOptions} for the defaults. */
export function createCudaRunner(options: CudaRunnerOptions = {}): CudaRunner {
  const repeat = options.repeat ?? 3;
  const timeoutSeconds = options.timeoutSeconds ?? 30;
  const referenceDir = options.referenceDir ?? join(Deno.cwd(), ".cache", "reference");
  let status: Promise<CudaDeviceStatus> | undefined;
  let closed = false;
  /** Reference output files by path: written, or why not. */
  const references = new Map<string, Promise<string | undefined>>();
  /** The first result of each artifact measured. */
  const measured = new Map<string, Promise<RunResult>>();

  /** Computes the reference output of `input` unless it is on disk; returns an error or nothing. */
  const ensureReference = (path: string, input: MeasureInput): Promise<string | undefined> => {
    let pending = references.get(path);
    if (!pending) {
      pending = (async () => {
        if (await exists(path)) return undefined;
        const req: ReferenceRequest = {
          reference: input.reference,
          signature: input.signature,
          seed: input.seed,
          path,
        };
        // Passive OpenMP threads: spinning ones can crash the process as it exits.
        const r = await worker(
          ["reference"],
          JSON.stringify(req),
          options.referenceTimeoutSeconds ?? 900,
          { OMP_WAIT_POLICY: "passive" },
        );
        // The file appears complete (renamed) or not at all, whatever happened after.
        if (r.ok || await exists(path)) return undefined;
        references.delete(path); // the next candidate tries again
        return `the reference output could not be computed: ${r.error}`;
      })();
      references.set(path, pending);
    }
    return pending;
  };

  const probe = (artifact: string): Promise<CudaDeviceStatus> => {
    status ??= (async () => {
      const r = await worker(["probe", artifact], undefined, timeoutSeconds);
      if (!r.ok) {
        return { ok: false, count: 0, message: `CUDA device probe failed: ${r.error}` };
      }
      const v = r.value as { count?: number; error?: number; message?: string };
      if (typeof v.count === "number") {
        return v.count > 0
          ? { ok: true, count: v.count, message: `${v.count} CUDA device(s)` }
          : { ok: false, count: 0, message: "no CUDA device (the runtime counts 0 devices)" };
      }
      const code = v.error ?? -1;
      return { ok: false, count: 0, code, message: deviceMessage(code, v.message ?? "") };
    })();
    return status;
  };

  return {
    async device(artifact) {
      if (!status && artifact) await probe(artifact);
      return status ? await status : undefined;
    },
    async run(inputs, onResult) {
      if (closed) throw new Error("runner is closed");
      const results: RunResult[] = [];
      for (let i = 0; i < inputs.length; i++) {
        const r = await measureOnce(inputs[i]);
        results.push(r);
        onResult?.(i, r);
      }
      return results;
    },
    close() {
      closed = true;
      return Promise.resolve();
    },
  };

  /** Measures `input`, or copies the result of the same artifact measured before. */
  async function measureOnce(input: MeasureInput): Promise<RunResult> {
    const key = JSON.stringify([input.artifact, input.seed, input.atol, input.rtol]);
    const first = measured.get(key);
    if (!first) {
      const pending = measure(input);
      measured.set(key, pending);
      const r = await pending;
      // A reference that could not be computed says nothing about the program.
      if (r.errorKind === "unknown") measured.delete(key);
      return r;
    }
    const r = await first;
    if (r.errorKind === "no_device") return { ...r, times: [...r.times] };
    const note = `same CUDA program as an earlier candidate (${
      basename(input.artifact, ".so")
    }): its result, not measured again`;
    return {
      ...r,
      error: r.error ? `${note}; ${r.error}` : note,
      times: [...r.times],
      runSeconds: 0,
    };
  }

  async function measure(input: MeasureInput): Promise<RunResult> {
    const start = performance.now();
    const seconds = () => (performance.now() - start) / 1000;
    const dev = await probe(input.artifact);
    if (!dev.ok) return { errorKind: "no_device", error: dev.message, times: [], runSeconds: 0 };
    const expected = await referencePath(referenceDir, input);
    const refError = await ensureReference(expected, input);
    if (refError) {
      return { errorKind: "unknown", error: refError, times: [], runSeconds: seconds() };
    }
    const req: CudaRequest = {
      artifact: input.artifact,
      expected,
      signature: input.signature,
      seed: input.seed,
      atol: input.atol,
      rtol: input.rtol,
      number: options.number ?? 1,
      repeat,
      minRepeatMs: options.minRepeatMs ?? 0,
      flushL2: options.flushL2 ?? false,
    };
    const r = await worker(["run"], JSON.stringify(req), timeoutSeconds);
    if (!r.ok) {
      return {
        errorKind: r.timedOut ? "run_timeout" : "runtime_crash",
        error: r.error,
        times: [],
        runSeconds: seconds(),
      };
    }
    const reply = r.value as CudaReply;
    return {
      errorKind: reply.errorKind,
      ...(reply.error !== undefined ? { error: reply.error } : {}),
      times: reply.times,
      runSeconds: seconds(),
      ...(typeof reply.verifySeconds === "number" ? { verifySeconds: reply.verifySeconds } : {}),
    };
  }
}
