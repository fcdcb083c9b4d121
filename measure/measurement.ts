/**
 * What a measurement worker does for one request, in-process: load the
 * candidate, check its output against the (cached) reference output (on
 * buffers against guard pages: a read or write past one faults every time),
 * then time it with the native harness `tb_time` on aligned buffers (with a
 * cutoff, racing: the first repeat alone when it is slower than the cutoff).
 *
 * @module
 */

import { alignedFloat32, guardedFloat32, pointerTable } from "./buffers.ts";
import { compareOutputs } from "./output_check.ts";
import { fillUniform } from "./prng.ts";
import { PROBE_SWEEPS, timeSymbolOf } from "./harness.ts";
import type { WorkerReply, WorkerRequest } from "./protocol.ts";
import type { KernelSignature } from "./types.ts";

const KERNEL_FN = { parameters: ["buffer"], result: "void" } as const;
const TIME_FN = {
  parameters: ["buffer", "i32", "i32", "f64", "i32", "buffer"],
  result: "i32",
} as const;
const PROBE_FN = { parameters: ["i32"], result: "f64", optional: true } as const;
const KERNEL_SYMBOLS = { tb_kernel: KERNEL_FN } as const;

/**
 * A loaded candidate: its kernel, its timer (`tb_time` of the harness), the
 * harness's speed probe (absent from a library built without it) and how to
 * unload it.
 */
interface Candidate {
  kernel: Deno.UnsafeFnPointer<typeof KERNEL_FN>["call"];
  time: Deno.UnsafeFnPointer<typeof TIME_FN>["call"];
  probe?: (iterations: number) => number;
  close(): void;
}

/** Opens a candidate whose kernel is `symbol` (`tb_kernel_<hash>` in a unity build). */
function openCandidate(path: string, symbol = "tb_kernel"): Candidate {
  const time = timeSymbolOf(symbol);
  const lib = Deno.dlopen(path, {
    [symbol]: KERNEL_FN,
    [time]: TIME_FN,
    tb_speed_probe: PROBE_FN,
  });
  const probe = lib.symbols.tb_speed_probe as ((n: number) => number) | null;
  return {
    kernel: lib.symbols[symbol] as Candidate["kernel"],
    time: lib.symbols[time] as Candidate["time"],
    ...(probe ? { probe } : {}),
    close: () => lib.close(),
  };
}

/**
 * The slower of two speed probes (GB/s), rounded to 0.1; undefined
 * unless both are positive and finite.
 *
 * @example
 * ```ts
 * import { slowerProbe } from "./measurement.ts";
 * if (slowerProbe(40.61, 21.26) !== 21.3 || slowerProbe(40, 0) !== undefined) throw new Error();
 * ```
 */
export function slowerProbe(before: number, after: number): number | undefined {
  const ok = (x: number) => Number.isFinite(x) && x > 0;
  return ok(before) && ok(after) ? Number(Math.min(before, after).toFixed(1)) : undefined;
}

type ReferenceLibrary = Deno.DynamicLibrary<typeof KERNEL_SYMBOLS>;

/** Reference inputs and outputs for one (reference, seed, signature). */
interface ReferenceData {
  /** Pristine input values, one per input buffer. */
  inputs: Float32Array[];
  /** Reference output values, one per output buffer. */
  outputs: Float32Array[];
}

/**
 * Whether repeats `times` are noisy: two or more, the slowest more than
 * `spread` times the fastest (`TimingOptions.noisySpread`).
 *
 * @example
 * ```ts
 * import { isNoisy } from "./measurement.ts";
 * if (!isNoisy([0.71, 0.53, 0.78], 1.25) || isNoisy([1.0, 1.1, 1.05], 1.25)) throw new Error();
 * if (isNoisy([5], 1.25)) throw new Error(); // one repeat has no spread
 * ```
 */
export function isNoisy(times: ArrayLike<number>, spread: number): boolean {
  if (times.length < 2) return false;
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < times.length; i++) {
    lo = Math.min(lo, times[i]);
    hi = Math.max(hi, times[i]);
  }
  return hi > spread * lo;
}

/** Default number of reference results (and reference libraries) kept. */
export const REFERENCE_CACHE_SIZE = 4;

/** A small least-recently-used map that calls `evict` on dropped values. */
class LruCache<V> {
  #map = new Map<string, V>();
  constructor(readonly capacity: number, readonly evict: (value: V) => void = () => {}) {}

  get(key: string): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    while (this.#map.size > this.capacity) {
      const [oldKey, oldValue] = this.#map.entries().next().value!;
      this.#map.delete(oldKey);
      this.evict(oldValue);
    }
  }

  clear(): void {
    for (const value of this.#map.values()) this.evict(value);
    this.#map.clear();
  }
}

function allocate(signature: KernelSignature): Float32Array[] {
  return signature.buffers.map((b) => alignedFloat32(b.size));
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Measures requests one at a time, caching reference outputs (and keeping the
 * reference libraries open) for the last few workloads.
 */
export class Measurer {
  #libraries: LruCache<ReferenceLibrary>;
  #references: LruCache<ReferenceData>;

  /** Keeps up to `cacheSize` reference outputs and reference libraries. */
  constructor(cacheSize = REFERENCE_CACHE_SIZE) {
    this.#libraries = new LruCache(cacheSize, (lib) => lib.close());
    this.#references = new LruCache(cacheSize);
  }

  /** Closes the cached reference libraries. */
  close(): void {
    this.#references.clear();
    this.#libraries.clear();
  }

  #referenceLibrary(path: string): ReferenceLibrary {
    let lib = this.#libraries.get(path);
    if (!lib) {
      lib = Deno.dlopen(path, KERNEL_SYMBOLS);
      this.#libraries.set(path, lib);
    }
    return lib;
  }

  #reference(request: WorkerRequest): ReferenceData {
    const { reference, seed, signature } = request;
    const key = JSON.stringify([reference, seed, signature.buffers]);
    const cached = this.#references.get(key);
    if (cached) return cached;
    const buffers = allocate(signature);
    const roles = signature.buffers.map((b) => b.role);
    const inputs = buffers.filter((_, i) => roles[i] === "input");
    fillUniform(seed, inputs);
    const pristine = inputs.map((b) => b.slice());
    let lib: ReferenceLibrary;
    try {
      lib = this.#referenceLibrary(reference);
    } catch (e) {
      throw new Error(`reference ${reference}: ${message(e)}`);
    }
    lib.symbols.tb_kernel(pointerTable(buffers));
    const data = { inputs: pristine, outputs: buffers.filter((_, i) => roles[i] === "output") };
    this.#references.set(key, data);
    return data;
  }

  /**
   * Checks and times one candidate. Never throws: failures become the reply's
   * errorKind. `onReferenceReady` is called once the reference output is at
   * hand (computed or cached), just before the candidate is loaded and run.
   */
  measure(request: WorkerRequest, onReferenceReady?: () => void): WorkerReply {
    const start = performance.now();
    /** Wall seconds of the output check, once it ran. */
    let verifySeconds: number | undefined;
    const reply = (fields: Omit<WorkerReply, "id" | "runSeconds">): WorkerReply => ({
      id: request.id,
      ...fields,
      runSeconds: (performance.now() - start) / 1000,
      ...(verifySeconds !== undefined ? { verifySeconds } : {}),
    });
    let lib: Candidate | undefined;
    try {
      const ref = this.#reference(request);
      onReferenceReady?.();
      lib = openCandidate(request.artifact, request.symbol);
      const { signature, timing } = request;
      const roles = signature.buffers.map((b) => b.role);
      // The check runs on buffers against guard pages: an access past a buffer faults every time.
      const verifyStart = performance.now();
      const check = guardedFloat32(signature.buffers.map((b) => b.size));
      let report;
      try {
        const inputs = check.buffers.filter((_, i) => roles[i] === "input");
        const outputs = check.buffers.filter((_, i) => roles[i] === "output");
        inputs.forEach((b, i) => b.set(ref.inputs[i]));
        outputs.forEach((b) => b.fill(NaN));
        lib.kernel(pointerTable(check.buffers));
        const names = signature.buffers.filter((b) => b.role === "output").map((b) => b.name);
        report = compareOutputs(
          outputs.map((got, i) => ({ name: names[i], got, expected: ref.outputs[i] })),
          request.atol,
          request.rtol,
        );
      } finally {
        check.release();
      }
      verifySeconds = (performance.now() - verifyStart) / 1000;
      if (report.bad > 0) {
        return reply({ errorKind: "wrong_answer", error: report.message, times: [] });
      }
      // Timing on aligned buffers, inputs as checked, output pages touched.
      const buffers = allocate(signature);
      buffers.forEach((b, i) => roles[i] === "input" ? b.set(ref.inputs[i]) : b.fill(0));
      const table = pointerTable(buffers);
      const times = new Float64Array(timing.repeat);
      // The machine's speed just before and just after the repeats; the slower is kept.
      const probeBefore = lib.probe?.(PROBE_SWEEPS);
      const probed = (fields: Omit<WorkerReply, "id" | "runSeconds">) => {
        const after = probeBefore !== undefined ? lib!.probe!(PROBE_SWEEPS) : NaN;
        const probeGBps = slowerProbe(probeBefore ?? NaN, after);
        return reply({ ...fields, ...(probeGBps !== undefined ? { probeGBps } : {}) });
      };
      // Racing: one repeat first, the others only if it can compete.
      const cutoff = request.cutoffSeconds;
      const race = cutoff !== undefined && timing.repeat > 1;
      const first = race ? 1 : timing.repeat;
      lib.time(
        table,
        timing.number,
        first,
        timing.minRepeatMs,
        timing.warmup,
        times,
      );
      if (race) {
        if (times[0] > cutoff) return probed({ errorKind: "none", times: [times[0]] });
        lib.time(table, timing.number, timing.repeat - 1, timing.minRepeatMs, 0, times.subarray(1));
      }
      // Noisy repeats: as many again, once, all kept.
      if (timing.noisySpread !== undefined && isNoisy(times, timing.noisySpread)) {
        const more = new Float64Array(timing.repeat);
        lib.time(table, timing.number, timing.repeat, timing.minRepeatMs, 0, more);
        return probed({ errorKind: "none", times: [...times, ...more] });
      }
      return probed({ errorKind: "none", times: Array.from(times) });
    } catch (e) {
      return reply({ errorKind: "runtime_error", error: message(e), times: [] });
    } finally {
      lib?.close();
    }
  }
}
