/**
 * The arithmetic ("math") of a GPU kernel, and which arithmetic a run may
 * use: FP32 FMA (IEEE products, what cuBLAS computes by default), or tensor
 * cores through `mma.sync` with TF32, FP16 or BF16 inputs (the GEMM
 * template's `gemm.mma` knob, `ir/gemm_gpu.ts`). A tensor-core kernel is
 * faster and less exact, so it is an opt-in, as in PyTorch
 * (`torch.backends.cuda.matmul.allow_tf32`,
 * `torch.set_float32_matmul_precision`) and Triton (`tl.dot`'s
 * `input_precision`): `tune --math fp32` searches FP32 kernels only, and a
 * comparison with cuBLAS FP32 takes only FP32 records.
 *
 * Loop-nest GPU kernels (the SSSRRSRS sketches, `matmul-gpu`, `conv2d-gpu`)
 * compute in FP32.
 *
 * @example
 * ```ts
 * import { mathOfSchedule, parseMath } from "./gemm_math.ts";
 * import { Schedule } from "./schedule.ts";
 * import { matmul } from "./workloads.ts";
 * import { createPrng } from "./prng.ts";
 * const sch = new Schedule(matmul(64, 64, 64), { prng: createPrng(0) });
 * if (mathOfSchedule(sch) !== "fp32") throw new Error();
 * sch.annotate("C", "gemm.mma", 1);
 * if (mathOfSchedule(sch) !== "tf32") throw new Error();
 * if (parseMath("tf32,fp32").join() !== "fp32,tf32") throw new Error();
 * ```
 * @module
 */
import { MMA_KINDS } from "./gemm_gpu.ts";
import { createPrng } from "./prng.ts";
import type { Schedule } from "./schedule.ts";
import { replayTrace, type Trace } from "./trace.ts";

/** One kind of arithmetic: the `gemm.mma` knob's values by name. */
export type MathKind = typeof MMA_KINDS[number];

/** Every kind, in the order of the `gemm.mma` values (what a run may use by default). */
export const ALL_MATH: readonly MathKind[] = MMA_KINDS;

/**
 * The kinds named by a comma-separated list (`fp32,tf32`), in
 * {@link ALL_MATH} order without repeats; a RangeError names an unknown one.
 */
export function parseMath(text: string): MathKind[] {
  const names = text.split(",").map((s) => s.trim());
  for (const n of names) {
    if (!(MMA_KINDS as readonly string[]).includes(n)) {
      throw new RangeError(
        `--math takes kinds of arithmetic separated by commas, from ${MMA_KINDS.join(", ")}; got "${
          n || text
        }"`,
      );
    }
  }
  return MMA_KINDS.filter((k) => names.includes(k));
}

/** The `gemm.mma` values of the kinds `math` allows. */
export function mmaValues(math: readonly MathKind[]): number[] {
  return MMA_KINDS.flatMap((k, i) => math.includes(k) ? [i] : []);
}

/** The arithmetic of a schedule: its `gemm.mma` pragma's kind, FP32 without one. */
export function mathOfSchedule(sch: Schedule): MathKind {
  for (const s of sch.stages) {
    const v = s.pragmas.get("gemm.mma");
    if (v !== undefined) return MMA_KINDS[v] ?? "fp32";
  }
  return "fp32";
}

/** The arithmetic of a recorded trace ({@link mathOfSchedule} of its replay). */
export function mathOfTrace(trace: Trace): MathKind {
  return mathOfSchedule(replayTrace(trace, { prng: createPrng(0) }));
}

/**
 * Whether a kernel computing in `kind` may stand against a peer library
 * computing in `peer`: FP32 only against FP32 (cuBLAS's default); against
 * TF32 tensor-core math (`CUBLAS_TF32_TENSOR_OP_MATH`, which also runs FP32
 * where it is faster), FP32 or TF32. FP16 and BF16 inputs stand against
 * neither.
 */
export function comparableMath(kind: MathKind, peer: "fp32" | "tf32"): boolean {
  return kind === "fp32" || (peer === "tf32" && kind === "tf32");
}
