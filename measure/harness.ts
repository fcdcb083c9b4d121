/**
 * The C timing harness the builder appends to every kernel source.
 *
 * It defines (for a kernel `tb_kernel`; `tb_time_X` for `tb_kernel_X`)
 * `int tb_time(float **bufs, int number, int repeat, double min_repeat_ms, int warmup, double *times_out)`,
 * which times `tb_kernel` inside native code, like TVM's time evaluator:
 * `warmup` untimed calls, then `repeat` repeats of `number` calls each, timed
 * with `clock_gettime(CLOCK_MONOTONIC)`. A repeat that has not lasted
 * `min_repeat_ms` after its `number` calls goes on, in the same repeat, with
 * as many more calls as its mean call time predicts are still needed (at
 * least one; the clock is read only between such chunks), until it has; its
 * call count is the `number` of the next repeat (at most
 * {@link HARNESS_MAX_NUMBER}). So no call is thrown away: a repeat that falls
 * short used to be redone with `number` at least doubled (TVM's evaluator
 * grows it at least 1.618x), which on a 0.5 ms kernel and 10 ms repeats made
 * the first repeat last about 20 ms. `times_out[r]` receives the seconds per
 * call of repeat `r`, and the last repeat's call count is returned.
 *
 * @module
 */

/** Largest `number` of calls per repeat the harness grows to. */
export const HARNESS_MAX_NUMBER = 1_000_000_000;

/** Version of {@link HARNESS_C}; part of the build cache key. Bump on any change. */
export const HARNESS_VERSION = "tb-harness-3";

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
    double calls = 0.0, chunk = (double)number, elapsed = 0.0;
    double t0 = tb_harness_now_ms();
    for (;;) {
      for (double i = 0.0; i < chunk; i += 1.0) kernel(bufs);
      calls += chunk;
      elapsed = tb_harness_now_ms() - t0;
      if (elapsed >= min_repeat_ms || calls >= max_number) break;
      /* The calls still needed at this repeat's mean call time, rounded up. */
      double need = elapsed > 0.0 ? (min_repeat_ms - elapsed) * calls / elapsed : calls;
      long long whole = (long long)need;
      chunk = (double)whole < need ? (double)(whole + 1) : (double)whole;
      if (chunk < 1.0) chunk = 1.0;
      if (calls + chunk > max_number) chunk = max_number - calls;
    }
    times_out[r] = elapsed * 1e-3 / calls;
    number = (int)calls;
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
