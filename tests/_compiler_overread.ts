/**
 * Tells a kernel whose C reads or writes past a buffer (a generator bug)
 * from one that only its compiled code reads past: GCC 12 at `-O3
 * -march=native` turns `i < 130 ? in[i] : 0.0f` in a loop of constant trip
 * count (the zero-padded edge of a packed copy, a guarded `omp simd` loop)
 * into a masked load whose constant mask it folds into a full-width
 * `vblendps` from memory: up to a vector's worth of floats past `in` are
 * read (see `compiler_overread_test.ts`). The runner's guard pages make that
 * fault every time. Such a kernel is built again with if-conversion off
 * (`-fno-tree-loop-if-convert`) and checked again: a kernel whose own C
 * overruns still faults, one that GCC made overrun passes.
 *
 * @module
 */
import { createBuilder, createRunner, DEFAULT_FLAGS, type MeasureInput } from "../measure/mod.ts";

/**
 * The builder's default flags with GCC's loop if-conversion (and so its masked loads) off, the flag
 * last. The builder's default flags now hold it (measure/builder.ts); `compiler_overread_test.ts`
 * builds with it on to show the over-read, and the property tests need no excuse any more.
 */
export const NO_IF_CONVERSION_FLAGS: string[] = [
  ...DEFAULT_FLAGS.filter((f) => f !== "-fno-tree-loop-if-convert"),
  "-fno-tree-loop-if-convert",
];

/** A kernel that crashed in the check: its source and its request without the artifact. */
export interface Crashed {
  source: string;
  input: Omit<MeasureInput, "artifact" | "symbol">;
}

/**
 * For each crashed kernel, true when built with {@link NO_IF_CONVERSION_FLAGS}
 * it builds, runs on guarded buffers and matches the reference: the crash
 * came from the compiler's masked loads, not from the generated C.
 *
 * @example
 * ```ts ignore
 * const fromGcc = await compilerOverreads([{ source, input }], ".cache/test-kernels");
 * ```
 */
export async function compilerOverreads(crashed: Crashed[], cacheDir: string): Promise<boolean[]> {
  if (crashed.length === 0) return [];
  const builds = await createBuilder({
    cacheDir,
    flags: NO_IF_CONVERSION_FLAGS,
    parallel: 2,
    timeoutSeconds: 600,
  }).build(crashed.map((c) => ({ source: c.source })));
  const runner = createRunner({
    workers: 2,
    timeoutSeconds: 300,
    timing: { number: 1, repeat: 1, warmup: 0, minRepeatMs: 0 },
  });
  try {
    const runs = await runner.run(crashed.map((c, i) => ({
      ...c.input,
      artifact: builds[i].artifact ?? "/nonexistent.so",
      symbol: builds[i].symbol,
    })));
    return runs.map((r, i) => builds[i].errorKind === "none" && r.errorKind === "none");
  } finally {
    await runner.close();
  }
}
