import assert from "node:assert/strict";
import { pointerTable } from "./buffers.ts";
import { createBuilder } from "./builder.ts";
import { pinOpenMP } from "./cpu_worker.ts";
import { HARNESS_C, PROBE_SWEEPS } from "./harness.ts";

/** Counts its calls and spins a little (about a microsecond). */
const COUNTING_KERNEL = `
static long tb_test_calls;
long tb_test_call_count(void) { return tb_test_calls; }
void tb_kernel(float **bufs) {
  tb_test_calls++;
  volatile float acc = 0.0f;
  for (int i = 0; i < 1000; i++) acc += bufs[0][i & 7];
}
`;

/**
 * Each call busy-waits `FAST_CALL_MS` of wall time for the first
 * `SLOW_AFTER_MS` after its first call since `tb_test_start()`, then
 * `SLOW_CALL_MS` (10x slower), counting the slow calls. Wall-time waits: a
 * call lasts at least that long, whatever the load.
 */
const FAST_CALL_MS = 0.1;
const SLOW_CALL_MS = 1;
const SLOW_AFTER_MS = 20;
const SLOWING_KERNEL = `#include <time.h>
static double tb_test_t0;
static long tb_test_slow;
static double tb_test_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
void tb_test_start(void) { tb_test_t0 = -1.0; tb_test_slow = 0; }
long tb_test_slow_calls(void) { return tb_test_slow; }
void tb_kernel(float **bufs) {
  (void)bufs;
  double now = tb_test_ms();
  if (tb_test_t0 < 0.0) tb_test_t0 = now;
  double wait = now - tb_test_t0 < ${SLOW_AFTER_MS} ? ${FAST_CALL_MS} : ${SLOW_CALL_MS};
  if (wait == ${SLOW_CALL_MS}) tb_test_slow++;
  while (tb_test_ms() - now < wait) {}
}
`;

const SYMBOLS = {
  tb_time: { parameters: ["buffer", "i32", "i32", "f64", "i32", "buffer"], result: "i32" },
  tb_test_call_count: { parameters: [], result: "i64" },
} as const;

const SLOWING_SYMBOLS = {
  tb_time: SYMBOLS.tb_time,
  tb_test_start: { parameters: [], result: "void" },
  tb_test_slow_calls: { parameters: [], result: "i64" },
} as const;

async function withHarness<S extends Deno.ForeignLibraryInterface = typeof SYMBOLS>(
  fn: (lib: Deno.DynamicLibrary<S>) => void,
  source = COUNTING_KERNEL,
  symbols: S = SYMBOLS as unknown as S,
): Promise<void> {
  const cacheDir = await Deno.makeTempDir({ prefix: "tb-harness-" });
  try {
    const [built] = await createBuilder({ cacheDir }).build([{ source }]);
    assert.equal(built.errorKind, "none", built.error ?? "");
    const lib = Deno.dlopen(built.artifact!, symbols);
    try {
      fn(lib);
    } finally {
      lib.close();
    }
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
  }
}

const bufs = () => pointerTable([new Float32Array(8)]);

Deno.test("tb_speed_probe sweeps each thread's buffer: a positive GB/s that a later call repeats", async () => {
  const probe = { tb_speed_probe: { parameters: ["i32"], result: "f64" } } as const;
  // The probe starts libgomp's threads: keep libgomp loaded after the library closes, as a
  // worker does.
  pinOpenMP();
  await withHarness(
    (lib) => {
      // The first call allocates and writes the buffers; each thread sweeps 256 KiB or more.
      const first = lib.symbols.tb_speed_probe(PROBE_SWEEPS);
      const t0 = performance.now();
      const again = lib.symbols.tb_speed_probe(1);
      const ms = performance.now() - t0;
      // One sweep's bytes in the call's wall time is a floor; no core of 2026 reads 10 TB/s.
      const floor = (256 * 1024) / (ms * 1e6);
      for (const gbps of [first, again]) {
        assert.ok(gbps >= floor && gbps < 10_000, `${gbps} GB/s (floor ${floor})`);
      }
    },
    COUNTING_KERNEL,
    probe,
  );
});

Deno.test("harness source defines tb_time", () => {
  assert.match(HARNESS_C, /int tb_time\(float \*\*bufs, int number, int repeat/);
  assert.match(HARNESS_C, /CLOCK_MONOTONIC/);
});

Deno.test("tb_time runs warmup plus number * repeat calls when minRepeatMs is 0", async () => {
  await withHarness((lib) => {
    const times = new Float64Array(3);
    const t0 = performance.now();
    const number = lib.symbols.tb_time(bufs(), 4, 3, 0, 2, times);
    const seconds = (performance.now() - t0) / 1000;
    assert.equal(number, 4);
    assert.equal(lib.symbols.tb_test_call_count(), 2n + 4n * 3n);
    // Seconds per call: 4 calls of each repeat fit in the whole call's wall time, whatever the load.
    for (const t of times) assert.ok(t > 0 && 4 * t <= seconds, `time ${t}`);
  });
});

Deno.test("tb_time grows each repeat until it lasts minRepeatMs, throwing no call away", async () => {
  await withHarness((lib) => {
    const times = new Float64Array(2);
    const number = lib.symbols.tb_time(bufs(), 1, 2, 5, 0, times);
    assert.ok(number > 1, `number ${number}`);
    // Every call is in a repeat, and each repeat lasted its 5 ms.
    const calls = Number(lib.symbols.tb_test_call_count());
    const first = calls - number;
    assert.ok(first > 1, `first repeat ${first} calls`);
    assert.ok(times[0] * first * 1000 >= 4.999, `first repeat lasted ${times[0] * first} s`);
    assert.ok(times[1] * number * 1000 >= 4.999, `last repeat lasted ${times[1] * number} s`);
  });
});

Deno.test("a repeat stops at its budget when calls slow down after an earlier repeat was sized", async () => {
  await withHarness(
    (lib) => {
      // Repeat 1 (20 ms) sizes itself on 0.1 ms calls; from 20 ms on every call takes >= 1 ms.
      const times = new Float64Array(3);
      lib.symbols.tb_test_start();
      lib.symbols.tb_time(bufs(), 1, 3, SLOW_AFTER_MS, 0, times);
      // A repeat runs slow calls until its 20 ms have passed (at most 20), plus the chunk then
      // in flight: at most an eighth of the budget at its rate so far, 2.5 ms of >= 0.1 ms calls
      // (26). Load only makes calls slower, hence fewer. Harness 3 began repeat 2 with repeat
      // 1's count (about 200 calls here), all slow.
      const slow = Number(lib.symbols.tb_test_slow_calls());
      const bound = 3 *
        (SLOW_AFTER_MS / SLOW_CALL_MS + Math.ceil(SLOW_AFTER_MS / 8 / FAST_CALL_MS) + 1);
      console.log(
        `slow calls after sizing: ${slow} (bound ${bound}); ms per call ${
          [...times].map((t) => (t * 1e3).toFixed(3))
        }`,
      );
      assert.ok(slow <= bound, `${slow} slow calls, more than ${bound}`);
      assert.ok(times.every((t) => t > 0));
    },
    SLOWING_KERNEL,
    SLOWING_SYMBOLS,
  );
});

/** A kernel with a layout rewrite: `tb_layout` and `tb_compute` count their calls. */
const REWRITING_KERNEL = `#define TB_LAYOUT_REWRITE 1
static long tb_test_layouts, tb_test_computes;
long tb_test_call_count(void) { return tb_test_computes; }
long tb_test_layout_count(void) { return tb_test_layouts; }
void tb_layout(float **bufs) { (void)bufs; tb_test_layouts++; }
void tb_compute(float **bufs) { (void)bufs; tb_test_computes++; }
void tb_kernel(float **bufs) { tb_layout(bufs); tb_compute(bufs); }
`;

Deno.test("tb_time of a kernel with a layout rewrite runs it once, then times the compute part", async () => {
  const symbols = {
    ...SYMBOLS,
    tb_test_layout_count: { parameters: [], result: "i64" },
  } as const;
  await withHarness(
    (lib) => {
      const times = new Float64Array(3);
      assert.equal(lib.symbols.tb_time(bufs(), 4, 3, 0, 2, times), 4);
      assert.equal(lib.symbols.tb_test_layout_count(), 1n);
      assert.equal(lib.symbols.tb_test_call_count(), 2n + 4n * 3n);
    },
    REWRITING_KERNEL,
    symbols,
  );
});
