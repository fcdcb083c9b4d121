/**
 * The C timing harness the builder appends to every kernel source.
 *
 * It defines (for a kernel `tb_kernel`; `tb_time_X` for `tb_kernel_X`)
 * `int tb_time(float **bufs, int number, int repeat, double min_repeat_ms, int warmup, double *times_out)`,
 * which times `tb_kernel` inside native code, like TVM's time evaluator:
 * `warmup` untimed calls, then `repeat` repeats of `number` calls each, timed
 * with `clock_gettime(CLOCK_MONOTONIC)`. A repeat shorter than
 * `min_repeat_ms` grows `number` to
 * `max(ceil(number * min_repeat_ms / elapsed_ms), 2 * number)` (capped at
 * {@link HARNESS_MAX_NUMBER}) and is redone; the grown `number` is kept for
 * the following repeats. `times_out[r]` receives the seconds per call of
 * repeat `r`, and the final `number` is returned.
 *
 * @module
 */

/** Largest `number` of calls per repeat the harness grows to. */
export const HARNESS_MAX_NUMBER = 1_000_000_000;

/** Version of {@link HARNESS_C}; part of the build cache key. Bump on any change. */
export const HARNESS_VERSION = "tb-harness-2";

/**
 * The timing loop, once per file (guarded): `tb_time_impl` times the kernel
 * it is given, so a file holding many kernels holds one copy of it.
 */
const HARNESS_IMPL = `
/* ---- tunebook timing harness (${HARNESS_VERSION}) ---- */
#ifndef TB_HARNESS_IMPL
#define TB_HARNESS_IMPL
#include <time.h>
#ifndef CLOCK_MONOTONIC /* strict ISO C hides the POSIX clock API */
#define CLOCK_MONOTONIC 1
extern int clock_gettime(int clock_id, struct timespec *tp);
#endif

static double tb_harness_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int tb_time_impl(void (*kernel)(float **), float **bufs, int number, int repeat,
                        double min_repeat_ms, int warmup, double *times_out) {
  const double max_number = ${HARNESS_MAX_NUMBER}.0;
  if (number < 1) number = 1;
  for (int i = 0; i < warmup; i++) kernel(bufs);
  for (int r = 0; r < repeat; r++) {
    for (;;) {
      double t0 = tb_harness_now_ms();
      for (int i = 0; i < number; i++) kernel(bufs);
      double elapsed = tb_harness_now_ms() - t0;
      if (elapsed >= min_repeat_ms || (double)number >= max_number) {
        times_out[r] = elapsed * 1e-3 / (double)number;
        break;
      }
      double want = (double)number * 10.0;
      if (elapsed > 0.0) {
        want = (double)number * min_repeat_ms / elapsed;
        long long whole = (long long)want;
        want = (double)whole < want ? (double)(whole + 1) : (double)whole;
      }
      if (want < (double)number * 2.0) want = (double)number * 2.0;
      if (want > max_number) want = max_number;
      number = (int)want;
    }
  }
  return number;
}
#endif
`;

/**
 * The harness of the kernel named `kernel` (appended after its source):
 * `tb_time` for `tb_kernel`, `tb_time_X` for `tb_kernel_X` (see
 * {@link timeSymbolOf}).
 */
export function harnessFor(kernel = "tb_kernel"): string {
  return `${HARNESS_IMPL}
void ${kernel}(float **bufs);
int ${timeSymbolOf(kernel)}(float **bufs, int number, int repeat, double min_repeat_ms, int warmup,
            double *times_out) {
  return tb_time_impl(${kernel}, bufs, number, repeat, min_repeat_ms, warmup, times_out);
}
`;
}

/** The timing function of kernel symbol `kernel`: `tb_kernel_X` -> `tb_time_X`. */
export function timeSymbolOf(kernel: string): string {
  return kernel.replace(/^tb_kernel/, "tb_time");
}

/** C source of the timing harness of `tb_kernel` (appended after the kernel source). */
export const HARNESS_C: string = harnessFor();
