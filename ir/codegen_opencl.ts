/**
 * OpenCL C generation: the twin of {@link ./codegen_cuda.ts}, from the same
 * lowered AST and the same {@link gpuLaunches}. Each root stage is a
 * `__kernel` whose bound loops read `get_group_id(d)` (blockIdx) and
 * `get_local_id(d)` (threadIdx); it is enqueued with global size
 * grid x block and local size block. Every global buffer (parameters, then
 * temporaries) is a kernel argument, in that order.
 *
 * Without a GPU, running this twin on PoCL (OpenCL on the CPU) checks that a
 * GPU schedule computes the right result: the CUDA kernel differs only in
 * how thread indices and qualifiers are spelled.
 *
 * @example
 * ```ts
 * import { openclProgram } from "./codegen_opencl.ts";
 * import { lower } from "./lower.ts";
 * import { Schedule } from "./schedule.ts";
 * import { matmul } from "./workloads.ts";
 * import { createPrng } from "./prng.ts";
 * const sch = new Schedule(matmul(8, 8, 8), { prng: createPrng(0) });
 * sch.bind("C", "i", "blockIdx.x");
 * sch.bind("C", "j", "threadIdx.x");
 * const p = openclProgram(lower(sch));
 * if (!p.source.includes("get_local_id(0)") || p.launches[0].block[0] !== 8) throw new Error();
 * ```
 * @module
 */
import type { Kernel, ThreadAxis } from "./ast.ts";
import { deviceBody, type Dialect, globalBuffers } from "./_gpu_emit.ts";
import { emitGemm } from "./_gemm_emit.ts";
import { isGemmKernel } from "./gemm_gpu.ts";
import { type GpuLaunch, gpuLaunches } from "./target_gpu.ts";

/** An OpenCL program with what a host needs to run it. */
export interface OpenCLProgram {
  /** OpenCL C source of every kernel. */
  source: string;
  /** Kernels in launch order, with their grid (work groups) and block (work-group size). */
  launches: Omit<GpuLaunch, "body">[];
  /** Global buffers in argument order: the parameters (inputs, outputs), then temporaries. */
  buffers: {
    buf: string;
    size: number;
    role: "input" | "output" | "temp";
    /** 16-bit storage of an input (`Kernel.params`): the runner writes converted values. */
    storage?: "f16" | "bf16";
  }[];
}

const OPENCL: Dialect = {
  index: (axis: ThreadAxis) => {
    const [kind, d] = axis.split(".");
    const dim = { x: 0, y: 1, z: 2 }[d as "x" | "y" | "z"];
    return kind === "blockIdx" ? `(int)get_group_id(${dim})` : `(int)get_local_id(${dim})`;
  },
  shared: "__local",
  barrier: "barrier(CLK_LOCAL_MEM_FENCE);",
};

/** OpenCL C source and launch description of a lowered GPU kernel. */
export function openclProgram(kernel: Kernel, options: { prefix?: string } = {}): OpenCLProgram {
  const prefix = options.prefix ?? "tb";
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,31}$/.test(prefix)) {
    throw new TypeError(`Invalid symbol prefix ${JSON.stringify(prefix)}`);
  }
  const launches = gpuLaunches(kernel, prefix);
  const bufs = globalBuffers(kernel);
  // GEMM template kernels: the twin of the CUDA source, without unroll pragmas
  // (PoCL's barrier handling blows up on unrolled loops with barriers).
  const out: string[] = isGemmKernel(kernel)
    ? emitGemm(kernel, launches, false).filter((l) => l !== "#pragma unroll")
    : [];
  for (const l of isGemmKernel(kernel) ? [] : launches) {
    const params = bufs.map((b) => `__global float *restrict ${b.buf}`).join(", ");
    out.push(
      `// stage ${l.stage}: ${l.grid.join("x")} groups of ${l.block.join("x")}`,
      `__kernel void ${l.name}(${params}) {`,
      ...deviceBody(l, OPENCL),
      "}",
      "",
    );
  }
  return {
    source: out.join("\n"),
    launches: launches.map(({ body: _, ...rest }) => rest),
    buffers: [
      ...kernel.params.map((p) => ({
        buf: p.buf,
        size: p.size,
        role: p.role,
        ...(p.storage ? { storage: p.storage } : {}),
      })),
      ...kernel.temps.map((t) => ({ buf: t.buf, size: t.size, role: "temp" as const })),
    ],
  };
}

/** OpenCL C source of a lowered GPU kernel (see {@link openclProgram}). */
export function generateOpenCL(kernel: Kernel, options: { prefix?: string } = {}): string {
  return openclProgram(kernel, options).source;
}
