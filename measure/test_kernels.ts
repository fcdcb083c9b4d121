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

/**
 * Tries to fork a child (named `tbforkchild`, which would sleep forever);
 * correct when the fork fails, wrong (`out[0] = -1`) when it succeeds.
 */
export const VADD_FORK = `#include <unistd.h>\n#include <sys/prctl.h>\n${
  kernel(`  pid_t child = fork();
  if (child == 0) { prctl(PR_SET_NAME, "tbforkchild"); for (;;) pause(); }
  for (int i = 0; i < N; i++) out[i] = a[i] + b[i];
  if (child > 0) out[0] = -1.0f;`)
}`;

/**
 * Asks for 6 GiB (without touching it); correct when the allocation fails,
 * wrong (`out[0] = -1`) when it succeeds.
 */
export const VADD_ALLOC_6G = `#include <stdlib.h>\n${
  kernel(`  char *volatile p = malloc((size_t)6 << 30); /* volatile: clang would elide the pair */
  for (int i = 0; i < N; i++) out[i] = a[i] + b[i];
  if (p) { out[0] = -1.0f; free(p); }`)
}`;

/** Kills its own worker with SIGKILL (as another process or the OOM killer would). */
export const VADD_SIGKILL = `#include <signal.h>\n#include <unistd.h>\n${
  kernel("  kill(getpid(), SIGKILL);")
}`;

/**
 * Correct, except that the first call in any process after `marker` was
 * missing creates `marker` and then never returns (sleeping, or with `spin`
 * spinning): a worker to be killed from outside, whose candidate measures
 * well the next time.
 */
export function vaddOnceStuck(marker: string, spin = false): string {
  return `#include <stdio.h>\n#include <unistd.h>\n${
    kernel(`  if (access(${JSON.stringify(marker)}, F_OK) != 0) {
    FILE *f = fopen(${JSON.stringify(marker)}, "w");
    if (f) fclose(f);
    volatile int spins = 0;
    for (;;) ${spin ? "spins++" : "usleep(1000)"};
  }
  for (int i = 0; i < N; i++) out[i] = a[i] + b[i];`)
  }`;
}
