/**
 * The OpenCL runner: runs the OpenCL twin of a GPU kernel
 * (`ir/codegen_opencl.ts`) through libOpenCL, in-process, on the first
 * OpenCL platform (PoCL on the CPU here), and checks its outputs against the
 * reference interpreter `ir/evaluate.ts` on seeded random inputs. That is how
 * a GPU schedule's correctness is checked on a machine without a GPU.
 *
 * Building a program is the slow part on PoCL, so several programs (each
 * generated with its own symbol prefix) can be built as one source with
 * {@link OpenCLRuntime.build} and run one by one with {@link OpenCLRuntime.execute}.
 *
 * @example
 * ```ts ignore
 * import { checkGpuSchedules, OpenCLRuntime } from "./opencl_runner.ts";
 * const rt = OpenCLRuntime.open();
 * const [r] = checkGpuSchedules(rt, [schedule]);
 * if (!r.ok) console.error(r.message);
 * rt.close();
 * ```
 * @module
 */
import { type OpenCLProgram, openclProgram } from "../ir/codegen_opencl.ts";
import { evaluate } from "../ir/evaluate.ts";
import { gemmTolerance } from "../ir/gemm_gpu.ts";
import type { Schedule } from "../ir/schedule.ts";
import { type GpuTarget, H100, verifyGpu } from "../ir/target_gpu.ts";
import {
  CL_DEVICE_MAX_WORK_GROUP_SIZE,
  CL_DEVICE_NAME,
  CL_DEVICE_TYPE_ALL,
  CL_MEM_READ_WRITE,
  CL_PLATFORM_NAME,
  CL_PROGRAM_BUILD_LOG,
  CL_TRUE,
  cString,
  handleTable,
  loadOpenCL,
  OpenCLError,
  type OpenCLLibrary,
} from "./_opencl_ffi.ts";
import { compareOutputs } from "./output_check.ts";
import { OPENCL_BUILD_PROBE, probeOpenCLBuild } from "./opencl_build_probe.ts";
import { fillUniform } from "./prng.ts";

/** The OpenCL compiler crashed building a source (in a child process: see `OpenCLRuntime.build`). */
export class OpenCLCompilerCrash extends Error {
  /** Creates the error with one line saying how it crashed. */
  constructor(message: string) {
    super(message);
    this.name = "OpenCLCompilerCrash";
  }
}

/** Options of {@link OpenCLRuntime.build} unless others are given. */
export const DEFAULT_BUILD_OPTIONS = "-cl-std=CL1.2 -cl-opt-disable";

/** A built OpenCL program (one or more generated programs in one source). */
export interface BuiltProgram {
  /** The `cl_program` handle. */
  readonly handle: Deno.PointerValue;
  /** Seconds `clBuildProgram` took. */
  readonly buildSeconds: number;
}

/** One OpenCL platform, device, context and queue. */
export class OpenCLRuntime {
  readonly #cl: OpenCLLibrary;
  readonly #device: Deno.PointerValue;
  readonly #context: Deno.PointerValue;
  readonly #queue: Deno.PointerValue;
  #closed = false;

  private constructor(
    cl: OpenCLLibrary,
    device: Deno.PointerValue,
    context: Deno.PointerValue,
    queue: Deno.PointerValue,
    /** `CL_PLATFORM_NAME`, e.g. "Portable Computing Language". */
    readonly platformName: string,
    /** `CL_DEVICE_NAME`. */
    readonly deviceName: string,
    /** `CL_DEVICE_MAX_WORK_GROUP_SIZE`. */
    readonly maxWorkGroupSize: number,
    /** The script that builds a source first, in a child process (see {@link build}). */
    readonly buildProbe: string,
  ) {
    this.#cl = cl;
    this.#device = device;
    this.#context = context;
    this.#queue = queue;
  }

  /**
   * Opens the first platform whose name contains `platform` (default: the
   * first platform with a device). `buildProbe` is the script that builds
   * each source first in a child process (default
   * `measure/opencl_build_probe.ts`; a test gives one that crashes). Throws a clear Error without libOpenCL or
   * without any platform (naming the Debian packages to install).
   */
  static open(options: { platform?: string; buildProbe?: string } = {}): OpenCLRuntime {
    const cl = loadOpenCL();
    try {
      const count = new Uint32Array(1);
      let rc = cl.symbols.clGetPlatformIDs(0, null, count);
      if (rc !== 0 || count[0] === 0) {
        throw new Error(
          `No OpenCL platform (clGetPlatformIDs: ${rc}); install pocl-opencl-icd (bash scripts/setup.sh opencl)`,
        );
      }
      const platforms = new BigUint64Array(count[0]);
      rc = cl.symbols.clGetPlatformIDs(count[0], platforms, null);
      if (rc !== 0) throw new OpenCLError("clGetPlatformIDs", rc);
      for (const p of platforms) {
        const platform = Deno.UnsafePointer.create(p);
        const name = infoString(cl, "clGetPlatformInfo", platform, CL_PLATFORM_NAME);
        if (options.platform && !name.includes(options.platform)) continue;
        const devices = new BigUint64Array(1);
        const n = new Uint32Array(1);
        if (cl.symbols.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, devices, n) !== 0) continue;
        const device = Deno.UnsafePointer.create(devices[0]);
        const deviceName = infoString(cl, "clGetDeviceInfo", device, CL_DEVICE_NAME);
        const wg = new BigUint64Array(1);
        cl.symbols.clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, 8n, wg, null);
        const err = new Int32Array(1);
        const context = cl.symbols.clCreateContext(null, 1, devices, null, null, err);
        if (err[0] !== 0 || !context) throw new OpenCLError("clCreateContext", err[0]);
        let queue = cl.symbols.clCreateCommandQueueWithProperties(context, device, null, err);
        if (err[0] !== 0 || !queue) {
          queue = cl.symbols.clCreateCommandQueue(context, device, 0n, err);
          if (err[0] !== 0 || !queue) {
            cl.symbols.clReleaseContext(context);
            throw new OpenCLError("clCreateCommandQueue", err[0]);
          }
        }
        return new OpenCLRuntime(
          cl,
          device,
          context,
          queue,
          name,
          deviceName,
          Number(wg[0]),
          options.buildProbe ?? OPENCL_BUILD_PROBE,
        );
      }
      throw new Error(
        `No OpenCL platform${
          options.platform ? ` named like "${options.platform}"` : ""
        } with a device; install pocl-opencl-icd (bash scripts/setup.sh opencl)`,
      );
    } catch (e) {
      cl.close();
      throw e;
    }
  }

  /**
   * Builds OpenCL C source; a compile error throws {@link OpenCLError} with
   * the build log. The default options turn optimisation off: this runner
   * checks results, and PoCL 3.1 both compiles faster that way and avoids an
   * assertion failure (`ParallelRegion::Verify`) that aborts the process on
   * some optimised loop nests with barriers.
   *
   * PoCL's compiler is LLVM in this process, and an assertion of LLVM aborts
   * it (PoCL 5 on an H100 machine: "Could not find a dominating alternative
   * variable" on one of 110 random GPU schedules). So by default (`isolate`)
   * the source is built first in a child process ({@link probeOpenCLBuild});
   * a crash there throws {@link OpenCLCompilerCrash} and the source is never
   * built here. PoCL keeps compiled programs in its kernel cache, so the
   * build here then finds the child's.
   */
  build(
    source: string,
    options = DEFAULT_BUILD_OPTIONS,
    { isolate = true }: { isolate?: boolean } = {},
  ): BuiltProgram {
    this.#check();
    if (isolate) {
      const crash = probeOpenCLBuild(source, options, this.platformName, this.buildProbe);
      if (crash) throw new OpenCLCompilerCrash(crash);
    }
    const cl = this.#cl;
    const err = new Int32Array(1);
    const text = cString(source);
    const strings = handleTable([Deno.UnsafePointer.of(text)]);
    const program = cl.symbols.clCreateProgramWithSource(this.#context, 1, strings, null, err);
    if (err[0] !== 0 || !program) throw new OpenCLError("clCreateProgramWithSource", err[0]);
    const start = performance.now();
    const rc = cl.symbols.clBuildProgram(
      program,
      1,
      handleTable([this.#device]),
      cString(options),
      null,
      null,
    );
    const buildSeconds = (performance.now() - start) / 1000;
    if (rc !== 0) {
      const log = this.#buildLog(program);
      cl.symbols.clReleaseProgram(program);
      throw new OpenCLError("clBuildProgram", rc, log);
    }
    return { handle: program, buildSeconds };
  }

  /** Releases a built program. */
  release(p: BuiltProgram): void {
    this.#cl.symbols.clReleaseProgram(p.handle);
  }

  /**
   * Runs the launches of `program` (built, possibly with others, into
   * `built`) on `inputs` (one per input parameter, in order) and returns the
   * outputs (one per output parameter).
   */
  execute(built: BuiltProgram, program: OpenCLProgram, inputs: Float32Array[]): Float32Array[] {
    this.#check();
    const cl = this.#cl;
    const err = new Int32Array(1);
    const mems: Deno.PointerValue[] = [];
    const kernels: Deno.PointerValue[] = [];
    try {
      for (const b of program.buffers) {
        const m = cl.symbols.clCreateBuffer(
          this.#context,
          CL_MEM_READ_WRITE,
          BigInt(b.size * 4),
          null,
          err,
        );
        if (err[0] !== 0 || !m) throw new OpenCLError(`clCreateBuffer(${b.buf})`, err[0]);
        mems.push(m);
      }
      const ins = program.buffers.flatMap((b, i) => b.role === "input" ? [i] : []);
      if (ins.length !== inputs.length) {
        throw new RangeError(`program takes ${ins.length} inputs, got ${inputs.length}`);
      }
      ins.forEach((bi, j) => {
        const b = program.buffers[bi];
        if (inputs[j].length !== b.size) {
          throw new RangeError(`input ${b.buf} needs ${b.size} values, got ${inputs[j].length}`);
        }
        // A 16-bit input gets its values rounded to FP16 or BF16 (as the CUDA harness does).
        const data = b.storage ? halfBits(inputs[j], b.storage) : inputs[j];
        const rc = cl.symbols.clEnqueueWriteBuffer(
          this.#queue,
          mems[bi],
          CL_TRUE,
          0n,
          BigInt(data.byteLength),
          data,
          0,
          null,
          null,
        );
        if (rc !== 0) throw new OpenCLError("clEnqueueWriteBuffer", rc);
      });
      for (const l of program.launches) {
        const k = cl.symbols.clCreateKernel(built.handle, cString(l.name), err);
        if (err[0] !== 0 || !k) throw new OpenCLError(`clCreateKernel(${l.name})`, err[0]);
        kernels.push(k);
        mems.forEach((m, i) => {
          const rc = cl.symbols.clSetKernelArg(k, i, 8n, handleTable([m]));
          if (rc !== 0) throw new OpenCLError(`clSetKernelArg(${l.name}, ${i})`, rc);
        });
        const global = new BigUint64Array(l.grid.map((g, d) => BigInt(g * l.block[d])));
        const local = new BigUint64Array(l.block.map(BigInt));
        const rc = cl.symbols.clEnqueueNDRangeKernel(
          this.#queue,
          k,
          3,
          null,
          global,
          local,
          0,
          null,
          null,
        );
        if (rc !== 0) {
          throw new OpenCLError(
            `clEnqueueNDRangeKernel(${l.name}, groups ${l.grid.join("x")}, local ${
              l.block.join("x")
            })`,
            rc,
          );
        }
      }
      const outs: Float32Array[] = [];
      program.buffers.forEach((b, i) => {
        if (b.role !== "output") return;
        const out = new Float32Array(b.size);
        const rc = cl.symbols.clEnqueueReadBuffer(
          this.#queue,
          mems[i],
          CL_TRUE,
          0n,
          BigInt(b.size * 4),
          out,
          0,
          null,
          null,
        );
        if (rc !== 0) throw new OpenCLError("clEnqueueReadBuffer", rc);
        outs.push(out);
      });
      const rc = cl.symbols.clFinish(this.#queue);
      if (rc !== 0) throw new OpenCLError("clFinish", rc);
      return outs;
    } finally {
      for (const k of kernels) cl.symbols.clReleaseKernel(k);
      for (const m of mems) cl.symbols.clReleaseMemObject(m);
    }
  }

  /** Releases the queue and context and unloads libOpenCL. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#cl.symbols.clReleaseCommandQueue(this.#queue);
    this.#cl.symbols.clReleaseContext(this.#context);
    this.#cl.close();
  }

  #check(): void {
    if (this.#closed) throw new Error("OpenCL runtime is closed");
  }

  #buildLog(program: Deno.PointerValue): string {
    const size = new BigUint64Array(1);
    const cl = this.#cl;
    cl.symbols.clGetProgramBuildInfo(program, this.#device, CL_PROGRAM_BUILD_LOG, 0n, null, size);
    const buf = new Uint8Array(Number(size[0]) + 1);
    cl.symbols.clGetProgramBuildInfo(
      program,
      this.#device,
      CL_PROGRAM_BUILD_LOG,
      BigInt(buf.length),
      buf,
      null,
    );
    return new TextDecoder().decode(buf).replace(/\0.*$/s, "").trim().slice(0, 4000);
  }
}

function infoString(
  cl: OpenCLLibrary,
  call: "clGetPlatformInfo" | "clGetDeviceInfo",
  handle: Deno.PointerValue,
  param: number,
): string {
  const buf = new Uint8Array(256);
  const rc = cl.symbols[call](handle, param, BigInt(buf.length), buf, null);
  if (rc !== 0) return "?";
  return new TextDecoder().decode(buf).replace(/\0.*$/s, "");
}

/** Result of checking one schedule on OpenCL. */
export interface GpuCheckResult {
  /** True when the OpenCL output matches the reference within tolerance. */
  ok: boolean;
  /** Why not (mismatch, build log, or a verifyGpu error). */
  message: string;
  /** The program that ran (absent when the schedule failed verification). */
  program?: OpenCLProgram;
  /**
   * Why not, as a kind: rejected by verification, did not build (a compile
   * error, or the compiler crashed: {@link OpenCLCompilerCrash}), failed to
   * run, or a wrong output.
   */
  failure?: "rejected" | "build" | "run" | "wrong";
}

/** Options of {@link checkGpuSchedules}. */
export interface CheckOptions {
  /** Seed of the random inputs. Default 0. */
  seed?: number;
  /** Target whose limits {@link verifyGpu} checks. Default H100. */
  target?: Readonly<GpuTarget>;
  /** Absolute tolerance. Default from the reduction length (as the CPU runner). */
  atol?: number;
  /** Relative tolerance. Default 1e-3. */
  rtol?: number;
}

/**
 * Verifies, lowers and emits every schedule as OpenCL (one program with a
 * prefix per schedule, built once), runs each on `rt` and compares its
 * outputs with {@link evaluate} on seeded inputs. When the whole does not
 * build, each program is built alone: one that does not build (or crashes
 * the compiler) is a `"build"` failure and the others are checked.
 */
export function checkGpuSchedules(
  rt: OpenCLRuntime,
  schedules: Schedule[],
  options: CheckOptions = {},
): GpuCheckResult[] {
  const results: GpuCheckResult[] = new Array(schedules.length);
  const programs: { i: number; program: OpenCLProgram; tol?: { atol: number; rtol: number } }[] =
    [];
  schedules.forEach((sch, i) => {
    try {
      const { kernel } = verifyGpu(sch, options.target ?? H100);
      // Tensor-core kernels (TF32, FP16, BF16 inputs) are checked with their precision's tolerance.
      const tol = gemmTolerance(kernel);
      programs.push({ i, program: openclProgram(kernel, { prefix: `p${i}` }), tol });
    } catch (e) {
      results[i] = { ok: false, message: (e as Error).message, failure: "rejected" };
    }
  });
  if (programs.length === 0) return results;
  let built: BuiltProgram;
  try {
    built = rt.build(programs.map((p) => p.program.source).join("\n"));
  } catch (e) {
    if (!(e instanceof OpenCLError || e instanceof OpenCLCompilerCrash)) throw e;
    // One program does not build, or crashes the compiler: each alone, to find which.
    for (const p of programs) {
      let one: BuiltProgram;
      try {
        one = rt.build(p.program.source);
      } catch (e) {
        if (!(e instanceof OpenCLError || e instanceof OpenCLCompilerCrash)) throw e;
        results[p.i] = { ok: false, message: e.message, program: p.program, failure: "build" };
        continue;
      }
      checkBuilt(rt, one, [p], schedules, options, results);
    }
    return results;
  }
  checkBuilt(rt, built, programs, schedules, options, results);
  return results;
}

/** Runs and compares the programs of a built source; releases it. */
function checkBuilt(
  rt: OpenCLRuntime,
  built: BuiltProgram,
  programs: { i: number; program: OpenCLProgram; tol?: { atol: number; rtol: number } }[],
  schedules: Schedule[],
  options: CheckOptions,
  results: GpuCheckResult[],
): void {
  try {
    for (const { i, program, tol } of programs) {
      const w = schedules[i].workload;
      const inputs = w.inputs.map((t) => new Float32Array(t.size));
      fillUniform(options.seed ?? 0, inputs);
      const expected = evaluate(w, new Map(w.inputs.map((t, j) => [t.name, inputs[j]])));
      let outs: Float32Array[];
      try {
        outs = rt.execute(built, program, inputs);
      } catch (e) {
        results[i] = { ok: false, message: (e as Error).message, program, failure: "run" };
        continue;
      }
      const terms = Math.max(
        1,
        ...w.outputs.map((t) => t.reduce?.axes.reduce((p, a) => p * a.extent, 1) ?? 1),
      );
      const report = compareOutputs(
        w.outputs.map((t, j) => ({
          name: t.name,
          got: outs[j],
          expected: Float32Array.from(expected.get(t.name)!),
        })),
        options.atol ?? tol?.atol ?? 1e-5 * Math.sqrt(terms) + 1e-5,
        options.rtol ?? tol?.rtol ?? 1e-3,
      );
      results[i] = {
        ok: report.bad === 0,
        message: report.message,
        program,
        ...(report.bad > 0 ? { failure: "wrong" as const } : {}),
      };
    }
  } finally {
    rt.release(built);
  }
}

/**
 * The 16-bit patterns of `x` in FP16 or BF16, each rounded to nearest even
 * (what `__float2half_rn` / `__float2bfloat16_rn` give on the GPU).
 *
 * @example
 * ```ts
 * import { halfBits } from "./opencl_runner.ts";
 * const [h, b] = [halfBits(new Float32Array([1.5]), "f16"), halfBits(new Float32Array([1.5]), "bf16")];
 * if (h[0] !== 0x3e00 || b[0] !== 0x3fc0) throw new Error();
 * ```
 */
export function halfBits(x: Float32Array, storage: "f16" | "bf16"): Uint16Array {
  if (storage === "f16") return new Uint16Array(Float16Array.from(x).buffer);
  const u = new Uint32Array(x.buffer, x.byteOffset, x.length), out = new Uint16Array(x.length);
  for (let i = 0; i < u.length; i++) {
    out[i] = Number.isNaN(x[i]) ? 0x7fc0 : ((u[i] + 0x7fff + ((u[i] >>> 16) & 1)) >>> 16) & 0xffff;
  }
  return out;
}
