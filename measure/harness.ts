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
 * Once per file it also defines `double tb_speed_probe(int sweeps)`, the
 * machine's speed now in GB/s: every thread of the OpenMP team the kernels
 * run on, all at once, sweeps a buffer of its own of twice its L2 cache
 * (`sysconf`; 1 MiB when unknown, 256 KiB to 4 MiB), multiply-adding what
 * it reads, `sweeps` times, and keeps its fastest sweep; the probe returns
 * the slowest thread's (-1 when it could not run). A parallel kernel runs at
 * its slowest core's pace, and a slow spell may slow one core alone, or the
 * shared cache and memory rather than the arithmetic: on the virtual AMD
 * EPYC of 2026-12-04 a probe of multiply-adds in registers on one thread
 * missed the spells that took a 2-thread matmul to 0.6 of its speed, while
 * this sweep fell with them (bench/results/slow_spells.md). The buffers are
 * allocated and written at the first call, and freed when the library is
 * unloaded. The worker runs the probe just before and just after a
 * candidate's repeats (`MeasureConditions.probeGBps`), so a result timed
 * while the machine ran slower than usual says so, where neither the load
 * nor the steal time nor the frequency shows it.
 *
 * @module
 */

/** Largest `number` of calls per repeat the harness grows to. */
export const HARNESS_MAX_NUMBER = 1_000_000_000;

/** Version of {@link HARNESS_C}; part of the build cache key. Bump on any change. */
export const HARNESS_VERSION = "tb-harness-6";

/**
 * Sweeps of each thread's buffer in one `tb_speed_probe` as the worker calls
 * it (each thread keeps its fastest, so one interrupt does not read as a slow
 * machine): about 0.1 ms on the CPUs of 2026.
 */
export const PROBE_SWEEPS = 4;

/**
 * The timing loop, once per file (guarded): `tb_time_impl` times the kernel
 * it is given, so a file holding many kernels holds one copy of it.
 */
const HARNESS_IMPL = `
/* ---- tunebook timing harness (${HARNESS_VERSION}) ---- */
#ifndef TB_HARNESS_IMPL
#define TB_HARNESS_IMPL
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif
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

/* The speed probe (see harness.ts): each thread sweeps a buffer of its own, twice its L2 cache. */
#define TB_PROBE_THREADS 256
static float *tb_probe_bufs[TB_PROBE_THREADS];
static long tb_probe_floats;
__attribute__((destructor)) static void tb_probe_release(void) {
  for (int i = 0; i < TB_PROBE_THREADS; i++) free(tb_probe_bufs[i]);
}
typedef float tb_probe_v8 __attribute__((vector_size(32)));
static double tb_probe_thread(int t, int sweeps) {
  if (t < 0 || t >= TB_PROBE_THREADS) return -1.0;
  const long n = tb_probe_floats;
  float *p = tb_probe_bufs[t];
  if (!p) {
    p = (float *)aligned_alloc(64, (size_t)n * sizeof(float));
    if (!p) return -1.0;
    for (long i = 0; i < n; i++) p[i] = 1.0f + (float)(i & 7) * 1e-3f;
    tb_probe_bufs[t] = p;
  }
  volatile float vm = 0.5f;
  const tb_probe_v8 m = (tb_probe_v8){0} + vm;
  tb_probe_v8 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
  double best = 0.0;
  for (int sweep = 0; sweep < sweeps; sweep++) {
    double t0 = tb_harness_now_ms();
    for (long i = 0; i < n; i += 32) {
      tb_probe_v8 a, b, c, d;
      __builtin_memcpy(&a, p + i, 32);
      __builtin_memcpy(&b, p + i + 8, 32);
      __builtin_memcpy(&c, p + i + 16, 32);
      __builtin_memcpy(&d, p + i + 24, 32);
      s0 = s0 * m + a; s1 = s1 * m + b; s2 = s2 * m + c; s3 = s3 * m + d;
    }
    double ms = tb_harness_now_ms() - t0;
    double rate = ms > 0.0 ? (double)n * sizeof(float) / (ms * 1e6) : 0.0;
    if (rate > best) best = rate;
  }
  tb_probe_v8 s = (s0 + s1) + (s2 + s3);
  volatile float sink = s[0] + s[7];
  (void)sink;
  return best;
}

/* The machine's speed now, GB/s: the slowest thread of the kernels' team, all at once. */
double tb_speed_probe(int sweeps) {
  if (tb_probe_floats == 0) {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    long bytes = l2 > 0 ? 2 * l2 : (1L << 20);
    if (bytes > (4L << 20)) bytes = 4L << 20;
    if (bytes < (256L << 10)) bytes = 256L << 10;
    tb_probe_floats = bytes / (long)sizeof(float) / 32 * 32;
  }
  double slowest = -1.0;
#ifdef _OPENMP
#pragma omp parallel
#endif
  {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    double rate = tb_probe_thread(t, sweeps);
#ifdef _OPENMP
#pragma omp critical(tb_speed_probe)
#endif
    if (rate > 0.0 && (slowest < 0.0 || rate < slowest)) slowest = rate;
  }
  return slowest;
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
