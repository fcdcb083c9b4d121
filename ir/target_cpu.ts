/**
 * What the CPU can run, and the C compiler that builds kernels for it.
 *
 * The generated C writes SIMD code with GNU vector types of
 * {@link vectorLanes} floats: 16 (a 64-byte AVX-512 register) where the CPU
 * has AVX-512, 8 (a 256-bit AVX register) where it does not. On a CPU
 * without AVX-512, GCC 12 has no machine mode for a 16-float type and keeps
 * every such variable in memory: a register tile of accumulators becomes
 * loads and stores around each FMA (README, "CPUs without AVX-512").
 * `TUNEBOOK_CC=clang-14` builds the kernels with clang instead
 * (`scripts/setup.sh` installs `clang-14` and `libomp-14-dev` on such a
 * CPU); gcc is the default everywhere ({@link kernelCompiler} says why).
 *
 * @example
 * ```ts
 * import { kernelCompiler } from "./target_cpu.ts";
 * const { cc, flags } = kernelCompiler("gcc");
 * if (!flags.includes("-fopenmp")) throw new Error(cc);
 * ```
 * @module
 */
import type { VectorLanes } from "./codegen_c.ts";

/**
 * The CPU's feature flags (`avx2`, `avx512f`, `fma`, ...), from the `flags`
 * line of /proc/cpuinfo, or from `lscpu` when /proc cannot be read; empty
 * when neither works. Read once per process.
 *
 * @example
 * ```ts
 * import { cpuFlags } from "./target_cpu.ts";
 * const flags = cpuFlags();
 * if (flags.size > 0 && !flags.has("sse2")) throw new Error("every x86-64 CPU has sse2");
 * ```
 */
export function cpuFlags(): Set<string> {
  cachedFlags ??= readCpuFlags();
  return new Set(cachedFlags);
}

let cachedFlags: Set<string> | undefined;

function readCpuFlags(): Set<string> {
  return new Set(cpuInfo("flags", "Flags")?.split(/\s+/) ?? []);
}

/**
 * The value of one field of the CPU's description: `procKey` of the first
 * processor in /proc/cpuinfo (`flags`, `model name`), or `lscpuKey` of
 * `lscpu`'s output (`Flags`, `Model name`) when /proc cannot be read (Deno
 * 2.9 asks for `--allow-all` to read it); undefined when neither has it.
 *
 * @example
 * ```ts
 * import { cpuInfo } from "./target_cpu.ts";
 * const model = cpuInfo("model name", "Model name");
 * if (model !== undefined && model.trim() !== model) throw new Error("trimmed");
 * ```
 */
export function cpuInfo(procKey: string, lscpuKey: string): string | undefined {
  const field = (text: string, key: string) =>
    text.match(new RegExp(`^${key}\\s*:\\s*(.+)$`, "m"))?.[1]?.trim() || undefined;
  try {
    const value = field(Deno.readTextFileSync("/proc/cpuinfo"), procKey);
    if (value) return value;
  } catch {
    // Not readable here: ask lscpu.
  }
  try {
    const out = new Deno.Command("lscpu", {
      env: { LC_ALL: "C" },
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    if (out.success) return field(new TextDecoder().decode(out.stdout), lscpuKey);
  } catch {
    // No lscpu, or no permission to run it.
  }
  return undefined;
}

/**
 * Floats per vector of the kernels generated for this machine
 * (`generateC`'s `lanes`): 16 where the CPU has AVX-512 (`avx512f` among
 * `flags`), else 8, which GCC keeps in AVX registers. On an AMD EPYC of
 * family 25 (AVX2), gcc's code of seven `conv2d-nchwc` tiles of ResNet-18's
 * 64x56x56 3x3 layer ran 6.5-14x faster with 8 lanes than with 16, on 2
 * threads (README, "CPUs without AVX-512").
 *
 * Without `flags` it is this machine's width: {@link laneOverride}
 * (`TUNEBOOK_LANES=8` runs an AVX-512 machine's lane-dependent code as on
 * AVX2), else from {@link cpuFlags}. Given `flags`, the override is not read.
 *
 * @example
 * ```ts
 * import { vectorLanes } from "./target_cpu.ts";
 * if (vectorLanes(new Set(["avx2", "avx512f"])) !== 16) throw new Error();
 * if (vectorLanes(new Set(["avx2", "fma"])) !== 8) throw new Error();
 * const here = vectorLanes();
 * if (here !== 8 && here !== 16) throw new Error(String(here));
 * ```
 */
export function vectorLanes(flags?: Set<string>): VectorLanes {
  if (flags === undefined) return laneOverride() ?? (cpuFlags().has("avx512f") ? 16 : 8);
  return flags.has("avx512f") ? 16 : 8;
}

/** `TUNEBOOK_LANES` is neither unset, `8` nor `16`. */
export class LanesError extends RangeError {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "LanesError";
  }
}

/**
 * The vector width `TUNEBOOK_LANES` asks for (read at each call): 8 or 16,
 * or undefined where it is unset, empty or cannot be read (no
 * `--allow-env`). Any other value is a {@link LanesError} naming it. With 8
 * on an AVX-512 CPU, kernels are generated for 8-float vectors and 16
 * registers (`registerFile`), as on an AVX2 CPU, and still compiled with
 * `-march=native`; with 16 on an AVX2 CPU they are correct but slow (GCC
 * keeps 16-float vectors in memory there).
 *
 * @example
 * ```ts
 * import { laneOverride, LanesError } from "./target_cpu.ts";
 * const before = Deno.env.get("TUNEBOOK_LANES");
 * try {
 *   Deno.env.set("TUNEBOOK_LANES", "8");
 *   if (laneOverride() !== 8) throw new Error();
 *   Deno.env.set("TUNEBOOK_LANES", "4");
 *   let refused = false;
 *   try {
 *     laneOverride();
 *   } catch (e) {
 *     refused = e instanceof LanesError;
 *   }
 *   if (!refused) throw new Error("4 lanes accepted");
 * } finally {
 *   if (before === undefined) Deno.env.delete("TUNEBOOK_LANES");
 *   else Deno.env.set("TUNEBOOK_LANES", before);
 * }
 * ```
 */
export function laneOverride(): VectorLanes | undefined {
  let text: string | undefined;
  try {
    text = Deno.env.get("TUNEBOOK_LANES");
  } catch {
    return undefined; // no --allow-env
  }
  if (text === undefined || text.trim() === "") return undefined;
  if (text.trim() === "8") return 8;
  if (text.trim() === "16") return 16;
  throw new LanesError(`TUNEBOOK_LANES must be 8 or 16 (floats per vector), got "${text}"`);
}

/** The vector registers a kernel's register tile lives in. */
export interface RegisterFile {
  /** Floats per register ({@link vectorLanes}). */
  lanes: VectorLanes;
  /** Vector registers: 32 with AVX-512 (zmm0-31), 16 with AVX2 (ymm0-15). */
  registers: number;
}

/**
 * The register file of the kernels generated for this machine (or for
 * `flags`): 32 registers of 16 floats where the CPU has AVX-512, else 16 of
 * 8; without `flags`, {@link vectorLanes}' width decides (so
 * `TUNEBOOK_LANES=8` gives 16 of 8). Register rules of the templates
 * (`search/templates/registry.ts`) count these.
 *
 * @example
 * ```ts
 * import { registerFile } from "./target_cpu.ts";
 * const avx2 = registerFile(new Set(["avx2", "fma"]));
 * if (avx2.lanes !== 8 || avx2.registers !== 16) throw new Error();
 * ```
 */
export function registerFile(flags?: Set<string>): RegisterFile {
  const lanes = vectorLanes(flags);
  return { lanes, registers: lanes === 16 ? 32 : 16 };
}

/** A C compiler and its flags for kernels. */
export interface KernelCompiler {
  /** Executable. */
  cc: string;
  /** Flags of every kernel build. */
  flags: readonly string[];
  /** The OpenMP runtime its `-fopenmp` kernels load (`libgomp.so.1`, `libomp.so.5`). */
  openmp: string;
}

/**
 * GCC's kernel flags. `-fno-tree-loop-if-convert`: GCC 12's loop
 * if-conversion turns a zero-padded edge (`i < 130 ? in[i] : 0` in a loop of
 * 136) into a full-width `vblendps` from memory that reads past `in`, which
 * the runner's guard pages record as `runtime_crash`; without it such a loop
 * stays scalar. Measured in bench/README.md ("Loop if-conversion"): it changes
 * the code of 5 of 32 sampled matmul-packed and 9 of 32 conv2d-packed kernels,
 * with no cost this machine could resolve on the fastest.
 */
export const GCC_FLAGS: readonly string[] = [
  "-O3",
  "-march=native",
  "-fno-tree-loop-if-convert",
  "-fopenmp",
  "-fPIC",
  "-shared",
  "-std=gnu11",
];

/**
 * Clang's kernel flags: GCC's less the GCC-only `-fno-tree-loop-if-convert`,
 * and `-Wno-psabi`, without which every function taking a 16-float vector
 * warns that its ABI differs without AVX-512 (and a compile error's message
 * would be cut before the error).
 */
export const CLANG_FLAGS: readonly string[] = [
  ...GCC_FLAGS.filter((f) => f !== "-fno-tree-loop-if-convert"),
  "-Wno-psabi",
];

/** GCC's OpenMP runtime, which its kernels load (clang's is `libomp.so.5`). */
export const LIBGOMP = "libgomp.so.1";

const GCC: KernelCompiler = { cc: "gcc", flags: GCC_FLAGS, openmp: LIBGOMP };
/**
 * The compiler kernels are built with: gcc with {@link GCC_FLAGS}, unless
 * `cc` (default: the environment's `TUNEBOOK_CC`, read at each call) names
 * another; a name containing `clang` gets {@link CLANG_FLAGS} and LLVM's
 * OpenMP runtime. gcc is the default on every CPU: with 8-float vectors
 * ({@link vectorLanes}) where the CPU has no AVX-512, its kernels run as fast
 * as clang's (README, "CPUs without AVX-512"); and with clang's kernels
 * the whole test suite crashed (SIGSEGV, network executor) 3 times in 3 on
 * 2026-11-28: libomp crashed starting again after the executor's hard
 * pause. The executor no longer pauses libomp (`pauseOpenMP` in
 * network/native.ts), and the suite with clang then passed; with the pause
 * put back it crashed again.
 *
 * @example
 * ```ts
 * import { kernelCompiler } from "./target_cpu.ts";
 * const clang = kernelCompiler("clang-14");
 * if (clang.openmp !== "libomp.so.5" || clang.flags.includes("-fno-tree-loop-if-convert")) {
 *   throw new Error();
 * }
 * if (kernelCompiler("gcc").cc !== "gcc") throw new Error();
 * ```
 */
export function kernelCompiler(cc?: string): KernelCompiler {
  const name = cc ?? envCompiler();
  if (!name || name === "gcc") return GCC;
  return /clang/.test(name)
    ? { cc: name, flags: CLANG_FLAGS, openmp: "libomp.so.5" }
    : { cc: name, flags: GCC_FLAGS, openmp: LIBGOMP };
}

/** `TUNEBOOK_CC`, or undefined where it is unset or cannot be read. */
function envCompiler(): string | undefined {
  try {
    return Deno.env.get("TUNEBOOK_CC") || undefined;
  } catch {
    return undefined; // no --allow-env
  }
}
