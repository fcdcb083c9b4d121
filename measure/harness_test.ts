import assert from "node:assert/strict";
import { pointerTable } from "./buffers.ts";
import { createBuilder } from "./builder.ts";
import { HARNESS_C } from "./harness.ts";

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

const SYMBOLS = {
  tb_time: { parameters: ["buffer", "i32", "i32", "f64", "i32", "buffer"], result: "i32" },
  tb_test_call_count: { parameters: [], result: "i64" },
} as const;

async function withHarness(
  fn: (lib: Deno.DynamicLibrary<typeof SYMBOLS>) => void,
): Promise<void> {
  const cacheDir = await Deno.makeTempDir({ prefix: "tb-harness-" });
  try {
    const [built] = await createBuilder({ cacheDir }).build([{ source: COUNTING_KERNEL }]);
    assert.equal(built.errorKind, "none", built.error ?? "");
    const lib = Deno.dlopen(built.artifact!, SYMBOLS);
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

Deno.test("harness source defines tb_time", () => {
  assert.match(HARNESS_C, /int tb_time\(float \*\*bufs, int number, int repeat/);
  assert.match(HARNESS_C, /CLOCK_MONOTONIC/);
});

Deno.test("tb_time runs warmup plus number * repeat calls when minRepeatMs is 0", async () => {
  await withHarness((lib) => {
    const times = new Float64Array(3);
    const number = lib.symbols.tb_time(bufs(), 4, 3, 0, 2, times);
    assert.equal(number, 4);
    assert.equal(lib.symbols.tb_test_call_count(), 2n + 4n * 3n);
    for (const t of times) assert.ok(t > 0 && t < 0.01, `time ${t}`);
  });
});

Deno.test("tb_time grows number until a repeat lasts minRepeatMs, throwing no call away", async () => {
  await withHarness((lib) => {
    const times = new Float64Array(2);
    const number = lib.symbols.tb_time(bufs(), 1, 2, 5, 0, times);
    assert.ok(number > 1, `number ${number}`);
    assert.ok(times[1] * number * 1000 >= 4.999, `last repeat lasted ${times[1] * number} s`);
    assert.ok(times.every((t) => t > 0));
    // A short repeat goes on instead of being redone: the first repeat's calls
    // are the second's starting number, so both together are at most 2 * number.
    const calls = lib.symbols.tb_test_call_count();
    assert.ok(calls > BigInt(number) && calls <= BigInt(number) * 2n, `${calls} calls, ${number}`);
  });
});
