/**
 * The C timing harness the builder appends to every kernel source.
 *
 * It defines (for a kernel `tb_kernel`; `tb_time_X` for `tb_kernel_X`)
 * `int tb_time(float **bufs, int number, int repeat, double min_repeat_ms, int warmup, double *times_out)`,
 * which times `tb_kernel` inside native code, like TVM's time evaluator:
 * `warmup` untimed calls, then `repeat` repeats, timed with
 * `clock_gettime(CLOCK_MONOTONIC)`. With `min_repeat_ms` 0 a repeat is
 * exactly `number` calls. Otherwise a repeat runs `number` calls, then goes
 * on in chunks, reading the clock after each, and stops at its budget: as
 * soon as it has lasted `min_repeat_ms` (or reached {@link HARNESS_MAX_NUMBER}
 * calls). Each chunk doubles the last, but is at most an eighth of the budget
 * and at most the calls still needed, both at this repeat's own rate so far.
 * Every repeat sizes itself afresh from `number`, so a repeat never runs a
 * call count sized by an earlier, faster one: when the machine slows down
 * after sizing, a repeat still ends within about its budget plus an eighth
 * of it times the slowdown. (Harness 3 went on with the previous repeat's
 * count: in `harness_test.ts`, calls turning from about 1 us to 1 ms after a
 * 20 ms repeat made it run 23,246 slow calls, 80 s, for two more repeats.)
 * No call is thrown away: a short repeat goes on rather than being redone.
 * A kernel that rewrites the layout of its weights (its source defines
 * `TB_LAYOUT_REWRITE`, see `Kernel.prologue`) has `tb_layout` run once and
 * `tb_compute` timed: its weights are constants, put in their layout ahead
 * of time as TVM and oneDNN do.
 * `times_out[r]` receives the seconds per call of repeat `r`, and the last
 * repeat's call count is returned.
 *
 * @module
 */

/** Largest `number` of calls per repeat the harness grows to. */
export const HARNESS_MAX_NUMBER = 1_000_000_000;

/** Version of {@link HARNESS_C}; part of the build cache key. Bump on any change. */
export const HARNESS_VERSION = "tb-harness-5";

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

/* Whole calls in x, rounded up, at least 1. */
static double tb_harness_calls(double x) {
  long long whole = (long long)x;
  double up = (double)whole < x ? (double)(whole + 1) : (double)whole;
  return up < 1.0 ? 1.0 : up;
}

static int tb_time_impl(void (*kernel)(float **), float **bufs, int number, int repeat,
                        double min_repeat_ms, int warmup, double *times_out) {
  const double max_number = ${HARNESS_MAX_NUMBER}.0;
  if (number < 1) number = 1;
  int last = number;
  for (int i = 0; i < warmup; i++) kernel(bufs);
  for (int r = 0; r < repeat; r++) {
    double calls = 0.0, chunk = (double)number, elapsed = 0.0;
    double t0 = tb_harness_now_ms();
    for (;;) {
      for (double i = 0.0; i < chunk; i += 1.0) kernel(bufs);
      calls += chunk;
      elapsed = tb_harness_now_ms() - t0;
      if (elapsed >= min_repeat_ms || calls >= max_number) break;
      /* Double, but at most 1/8 of the budget and the calls still needed, at this repeat's rate. */
      double next = 2.0 * chunk;
      if (elapsed > 0.0) {
        double eighth = tb_harness_calls(min_repeat_ms * 0.125 * calls / elapsed);
        double need = tb_harness_calls((min_repeat_ms - elapsed) * calls / elapsed);
        if (next > eighth) next = eighth;
        if (next > need) next = need;
      }
      if (calls + next > max_number) next = max_number - calls;
      chunk = next;
    }
    times_out[r] = elapsed * 1e-3 / calls;
    last = (int)calls;
  }
  return last;
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
#ifdef TB_LAYOUT_REWRITE
  tb_layout(bufs);
  return tb_time_impl(tb_compute, bufs, number, repeat, min_repeat_ms, warmup, times_out);
#else
  return tb_time_impl(${kernel}, bufs, number, repeat, min_repeat_ms, warmup, times_out);
#endif
}
`;
}

/** The timing function of kernel symbol `kernel`: `tb_kernel_X` -> `tb_time_X`. */
export function timeSymbolOf(kernel: string): string {
  return kernel.replace(/^tb_kernel/, "tb_time");
}

/** C source of the timing harness of `tb_kernel` (appended after the kernel source). */
export const HARNESS_C: string = harnessFor();
