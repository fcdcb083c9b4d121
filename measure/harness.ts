/**
 * The C timing harness the builder appends to every kernel source.
 *
 * It defines
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
export const HARNESS_VERSION = "tb-harness-1";

/** C source of the timing harness (appended after the kernel source). */
export const HARNESS_C = `
/* ---- tunebook timing harness (${HARNESS_VERSION}) ---- */
#include <time.h>
#ifndef CLOCK_MONOTONIC /* strict ISO C hides the POSIX clock API */
#define CLOCK_MONOTONIC 1
extern int clock_gettime(int clock_id, struct timespec *tp);
#endif

void tb_kernel(float **bufs);

static double tb_harness_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int tb_time(float **bufs, int number, int repeat, double min_repeat_ms, int warmup,
            double *times_out) {
  const double max_number = ${HARNESS_MAX_NUMBER}.0;
  if (number < 1) number = 1;
  for (int i = 0; i < warmup; i++) tb_kernel(bufs);
  for (int r = 0; r < repeat; r++) {
    for (;;) {
      double t0 = tb_harness_now_ms();
      for (int i = 0; i < number; i++) tb_kernel(bufs);
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
`;
