/**
 * C kernels shared by the measure tests: a vector add over {@link N} floats
 * and broken variants of it.
 *
 * @module
 */

import type { KernelSignature } from "./types.ts";

/** Elements per vector. */
export const N = 1024;

/** `out = a + b`: inputs a, b and output out, each {@link N} floats. */
export const VADD_SIGNATURE: KernelSignature = {
  buffers: [
    { name: "a", size: N, role: "input" },
    { name: "b", size: N, role: "input" },
    { name: "out", size: N, role: "output" },
  ],
};

function kernel(body: string): string {
  return `#define N ${N}\nvoid tb_kernel(float **bufs) {\n  float *a = bufs[0], *b = bufs[1], *out = bufs[2];\n  (void)a; (void)b; (void)out;\n${body}\n}\n`;
}

/** The reference, written the naive way. */
export const VADD_REFERENCE = kernel("  for (int i = 0; i < N; i++) out[i] = a[i] + b[i];");

/** A correct, vectorised candidate. */
export const VADD_GOOD = kernel(
  "  #pragma omp simd aligned(a, b, out : 64)\n  for (int i = 0; i < N; i++) out[i] = b[i] + a[i];",
);

/** Computes the wrong value (for some elements). */
export const VADD_WRONG = kernel(
  "  for (int i = 0; i < N; i++) out[i] = a[i] + b[i];\n  out[7] += 1.0f; out[100] = 0.0f;",
);

/** Writes nothing. */
export const VADD_NOTHING = kernel("");

/** Dies with SIGSEGV. */
export const VADD_SEGFAULT = kernel("  *(volatile int *)0 = 1;");

/** Never returns. */
export const VADD_HANG = kernel("  volatile int spin = 0;\n  for (;;) spin++;");

/** Does not compile. */
export const VADD_COMPILE_ERROR = kernel("  out[0] = undeclared_variable_xyz;");

/** Seconds {@link VADD_SLOW_REFERENCE} busy-waits. */
export const SLOW_REFERENCE_SECONDS = 2.5;

/**
 * A reference that busy-waits {@link SLOW_REFERENCE_SECONDS} of wall time,
 * then is correct on its first call only: every later call in the same
 * process writes zeros, so a candidate checked against a recomputed (not
 * cached) reference output is a wrong answer.
 */
export const VADD_SLOW_REFERENCE = `#include <time.h>\n${
  kernel(`  static int calls = 0;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < ${SLOW_REFERENCE_SECONDS});
  for (int i = 0; i < N; i++) out[i] = calls == 0 ? a[i] + b[i] : 0.0f;
  calls++;`)
}`;

/** Correct only when OpenMP runs it with exactly one thread: adds `omp_get_max_threads() - 1`. */
export const VADD_ONE_THREAD = `#include <omp.h>\n${
  kernel("  for (int i = 0; i < N; i++) out[i] = a[i] + b[i] + (float)(omp_get_max_threads() - 1);")
}`;
