/**
 * Native kernels for the executor: schedules compiled to shared libraries by
 * the builder (content-hash cache) and called in this process through
 * `Deno.dlopen`, each on `float **bufs` (inputs then outputs).
 *
 * A kernel with a layout rewrite of its weights (`Kernel.prologue`) keeps the
 * rewritten weights in its library's work space: `runPrepared` rewrites them
 * on its first call only, so a network compiles one instance of such a
 * kernel per layer (`instances`), each bound to that layer's weights.
 *
 * @example
 * ```ts ignore
 * import { compileSchedules } from "./native.ts";
 * import { Schedule } from "../ir/schedule.ts";
 * import { createPrng } from "../ir/prng.ts";
 * import { matmul } from "../ir/workloads.ts";
 * const [k] = await compileSchedules([new Schedule(matmul(4, 4, 4), { prng: createPrng(0) })]);
 * k.run([new Float32Array(16), new Float32Array(16), new Float32Array(16)]);
 * k.close();
 * ```
 * @module
 */
import { fileURLToPath } from "node:url";
import { generateC } from "../ir/codegen_c.ts";
import { lower } from "../ir/lower.ts";
import type { Schedule } from "../ir/schedule.ts";
import { pointerTable } from "../measure/buffers.ts";
import { createBuilder } from "../measure/builder.ts";
import { kernelCompiler, LIBGOMP, vectorLanes } from "../ir/target_cpu.ts";

/** A compiled kernel loaded into this process. */
export interface NativeKernel {
  /** Buffer sizes in the kernel's order (inputs, then outputs), in float32 elements. */
  readonly sizes: number[];
  /** Calls the kernel on buffers (aligned ones are fastest: `measure/buffers.ts`). */
  run(buffers: Float32Array[]): void;
  /**
   * Calls the kernel, rewriting the layout of its weights on the first call
   * only: every call must pass the same weights (contents unchanged). Same as
   * `run` for a kernel without a layout rewrite.
   */
  runPrepared(buffers: Float32Array[]): void;
  /** Unloads the library. */
  close(): void;
}

const OPENMP_SYMBOLS = {
  omp_get_max_threads: { parameters: [], result: "i32" },
  omp_pause_resource_all: { parameters: ["i32"], result: "i32" },
} as const;

/** The kernels' OpenMP runtime (libgomp, or clang's libomp), held open for the process's life. */
let openmp: Deno.DynamicLibrary<typeof OPENMP_SYMBOLS> | null | undefined;
/** Whether it is libgomp, whose threads {@link pauseOpenMP} may end. */
let pausable = false;

/**
 * Kernels built with -fopenmp leave libgomp's threads running: closing the last
 * kernel (or collecting an unreferenced handle) must not unload it under them.
 */
function pinOpenMP(): void {
  if (openmp !== undefined) return;
  try {
    // LLVM's libomp registers fork handlers that abort a child forked after a
    // kernel ran (every later compiler process died of SIGABRT before its exec);
    // it reads this when it starts, so set it before any kernel loads it.
    Deno.env.set("KMP_INIT_AT_FORK", "false");
  } catch {
    // Not allowed (a task's --allow-env without KMP_*): libgomp does not read it. Before
    // 2026-12-02 this threw inside the try below, so the runtime was never pinned nor
    // paused, and every `deno task tune-network` died of SIGSEGV when its kernels closed.
  }
  try {
    const { openmp: name } = kernelCompiler();
    openmp = Deno.dlopen(name, OPENMP_SYMBOLS);
    pausable = name === LIBGOMP;
  } catch {
    openmp = null; // no OpenMP runtime: kernels are built without it
  }
}

/**
 * Ends libgomp's worker threads (`omp_pause_resource_all(omp_pause_hard)`,
 * OpenMP 5.0); the next parallel kernel starts new ones. Threads that still
 * spin-wait right after a short parallel kernel crash the process if it exits
 * or unloads their kernel meanwhile, so a kernel and the executor call this when closed.
 * Not LLVM's libomp (`TUNEBOOK_CC=clang-14`): its runtime can crash when it
 * starts again after a hard pause (llvm-project issue 154201), and the whole
 * test suite with clang's kernels crashed with SIGSEGV in the executor's
 * tests on 2026-11-28; its threads wait inside the pinned runtime, not in a
 * kernel's library.
 */
export function pauseOpenMP(): void {
  if (pausable) openmp?.symbols.omp_pause_resource_all(2);
}

/** Where compiled kernels are cached by default. */
export const DEFAULT_CACHE_DIR = fileURLToPath(
  new URL("../.cache/network-kernels", import.meta.url),
);

/** Compiles schedules in parallel and loads each; throws naming the first that fails to build. */
export async function compileSchedules(
  schedules: Schedule[],
  options: {
    cacheDir?: string;
    parallel?: number;
    /** A tag per schedule: equal schedules with different tags get their own libraries. */
    instances?: (string | undefined)[];
  } = {},
): Promise<NativeKernel[]> {
  pinOpenMP();
  const kernels = schedules.map((s) => lower(s));
  const lanes = vectorLanes();
  const sources = kernels.map((k, i) => {
    const tag = options.instances?.[i];
    return generateC(k, { lanes }) + (tag === undefined ? "" : `/* instance ${tag} */\n`);
  });
  const builder = createBuilder({
    cacheDir: options.cacheDir ?? DEFAULT_CACHE_DIR,
    parallel: options.parallel ?? 2,
  });
  const built = await builder.build(sources.map((source) => ({ source })));
  return built.map((b, i) => {
    if (b.errorKind !== "none" || !b.artifact) {
      const w = schedules[i].workload;
      throw new Error(`Kernel ${w.name}(${w.shape}) failed to build (${b.errorKind}): ${b.error}`);
    }
    const fn = { parameters: ["buffer"], result: "void" } as const;
    const rewritesLayout = (kernels[i].prologue?.length ?? 0) > 0;
    const lib = Deno.dlopen(b.artifact, {
      tb_kernel: fn,
      ...(rewritesLayout ? { tb_compute: fn } : {}),
    });
    const sizes = kernels[i].params.map((p) => p.size);
    const check = (buffers: Float32Array[]) => {
      if (buffers.length !== sizes.length || buffers.some((b, j) => b.length < sizes[j])) {
        throw new RangeError(`Kernel buffers must hold ${sizes.join(", ")} floats`);
      }
    };
    let prepared = false;
    return {
      sizes,
      run(buffers: Float32Array[]) {
        check(buffers);
        lib.symbols.tb_kernel(pointerTable(buffers));
      },
      runPrepared(buffers: Float32Array[]) {
        check(buffers);
        const compute = prepared ? lib.symbols.tb_compute : undefined;
        (compute ?? lib.symbols.tb_kernel)(pointerTable(buffers));
        prepared = true;
      },
      close: () => {
        // Worker threads still spinning in this library would crash once it is unloaded.
        pauseOpenMP();
        lib.close();
      },
    };
  });
}
