/**
 * GFLOP/s of the `matmul-packed` template at a few hand-picked points (the
 * register tiles, cache blocks and packing codegen-lessons.md recommends,
 * and ablations without packing), for square matmuls, each checked against
 * the naive schedule's output. The machine is shared, so it also measures
 * the AVX-512 FMA throughput available right now (independent FMA chains on
 * 1 and 2 threads) to read the figures against.
 *
 * ```sh
 * deno run -A bench/matmul_kernels.ts [--sizes 512,1024] [--rounds 3] [--threads 2]
 * ```
 * Prints one line per size and point (best and median GFLOP/s over all
 * repeats of all rounds), then one line of JSON.
 * @module
 */
import { join } from "node:path";
import { generateC, type VectorLanes } from "../ir/codegen_c.ts";
import { lower } from "../ir/lower.ts";
import { pointOfValues } from "../ir/knobs.ts";
import { createPrng } from "../ir/prng.ts";
import { Schedule } from "../ir/schedule.ts";
import { replayTrace } from "../ir/trace.ts";
import { createWorkload } from "../ir/workloads.ts";
import { createBuilder, createRunner } from "../measure/mod.ts";
import { vectorLanes } from "../ir/target_cpu.ts";
import { templateSpace } from "../search/templates/registry.ts";
import { parseFlags, runCommand } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/matmul_kernels.ts [--sizes 512,1024] [--rounds 3] [--threads 2]`;

/** The template points measured (knob values by name). */
export const POINTS: Record<string, unknown>[] = [
  { mr: 6, nr: 64, mc: 8, nc: 1, pack: "AB", order: 0, unroll_k: 1, parallel: 1, kc: 0 },
  { mr: 8, nr: 32, mc: 8, nc: 2, pack: "AB", order: 0, unroll_k: 1, parallel: 1, kc: 0 },
  { mr: 8, nr: 48, mc: 8, nc: 2, pack: "AB", order: 0, unroll_k: 1, parallel: 1, kc: 0 },
  { mr: 6, nr: 64, mc: 8, nc: 4, pack: "AB", order: 0, unroll_k: 1, parallel: 1, kc: 512 },
  { mr: 8, nr: 32, mc: 8, nc: 4, pack: "AB", order: 0, unroll_k: 1, parallel: 1, kc: 256 },
  { mr: 6, nr: 64, mc: 8, nc: 1, pack: "B", order: 0, unroll_k: 1, parallel: 1, kc: 0 },
  { mr: 6, nr: 64, mc: 8, nc: 1, pack: "none", order: 0, unroll_k: 1, parallel: 1, kc: 0 },
];

/** One measured point. */
export interface KernelFigure {
  size: number;
  point: Record<string, unknown>;
  best_gflops: number;
  median_gflops: number;
  error?: string;
}

/**
 * C that times 12 independent FMA chains of `lanes`-float vectors (GNU
 * vector types, as the kernels are written) and prints GFLOP/s: 2 x
 * `lanes` flops per FMA. Its threads are its argument count (none: 1).
 *
 * @example
 * ```ts
 * import { peakSource } from "./matmul_kernels.ts";
 * if (!peakSource(8).includes("vector_size(32)")) throw new Error("8 floats are 32 bytes");
 * if (!peakSource(16).includes("* 12 * 32 *")) throw new Error("12 chains of 32 flops");
 * ```
 */
export function peakSource(lanes: VectorLanes): string {
  return `#include <stdio.h>
#include <omp.h>
typedef float vec __attribute__((vector_size(${lanes * 4})));
int main(int argc, char **argv) {
  int threads = argc > 1 ? argc : 1;
  double t0 = omp_get_wtime();
  float sink = 0;
  #pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
    vec a[12], b = (vec){0} + 1.0000001f, c = (vec){0} + 1e-7f;
    for (int j = 0; j < 12; j++) a[j] = (vec){0} + (float)j;
    for (long i = 0; i < 50000000; i++) {
      _Pragma("GCC unroll 12")
      for (int j = 0; j < 12; j++) a[j] = a[j] * b + c;
    }
    for (int j = 0; j < 12; j++) sink += a[j][0];
  }
  double t = omp_get_wtime() - t0;
  printf("%.1f %g\\n", 50000000.0 * 12 * ${2 * lanes} * threads / t / 1e9, sink);
  return 0;
}
`;
}

/**
 * FMA GFLOP/s available now on 1 and 2 threads (independent chains), with
 * the vectors of the kernels measured: `lanes` floats (default
 * {@link vectorLanes}: 16 with AVX-512, 8 on AVX2, or `TUNEBOOK_LANES`).
 * Timing 16-float vectors on AVX2 measured GCC's spills, not the FMA units.
 */
export async function fmaPeak(lanes: VectorLanes = vectorLanes()): Promise<[number, number]> {
  const dir = await Deno.makeTempDir({ prefix: "tb-peak-" });
  try {
    const c = join(dir, "peak.c"), exe = join(dir, "peak");
    await Deno.writeTextFile(c, peakSource(lanes));
    const cc = await new Deno.Command("gcc", {
      args: ["-O2", "-march=native", "-fopenmp", c, "-o", exe],
    }).output();
    if (!cc.success) throw new Error(new TextDecoder().decode(cc.stderr));
    const run = async (args: string[]) => {
      const out = await new Deno.Command(exe, { args }).output();
      return Number(new TextDecoder().decode(out.stdout).split(" ")[0]);
    };
    return [await run([]), await run(["2"])];
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Builds and measures every point on `size`^3 with `threads` OpenMP threads;
 * `rounds` runs of 5 repeats each.
 */
export async function measureSize(
  size: number,
  rounds: number,
  threads = 2,
): Promise<KernelFigure[]> {
  const w = createWorkload("matmul", [size, size, size]);
  const t = templateSpace("matmul-packed", w);
  const lanes = vectorLanes();
  const sources = POINTS.map((values) => {
    const point = pointOfValues(t.space.knobs, values)!;
    const sch = replayTrace(t.candidateOf(point).trace!, { prng: createPrng(0) });
    return generateC(lower(sch), { lanes });
  });
  const naive = lower(new Schedule(w, { prng: createPrng(0) }));
  const builder = createBuilder({ cacheDir: ".cache/bench-kernels", parallel: 2 });
  const [ref, ...built] = await builder.build(
    [generateC(naive, { lanes }), ...sources].map((source) => ({ source })),
  );
  const signature = {
    buffers: naive.params.map((p) => ({ name: p.tensor, size: p.size, role: p.role })),
  };
  const runner = createRunner({
    workers: 1,
    ompThreads: threads,
    timeoutSeconds: 120,
    timing: { number: 1, repeat: 5, warmup: 1, minRepeatMs: 100 },
  });
  const times: number[][] = POINTS.map(() => []);
  const errors: (string | undefined)[] = POINTS.map(() => undefined);
  try {
    for (let r = 0; r < rounds; r++) {
      const results = await runner.run(built.map((b) => ({
        artifact: b.artifact ?? "/nonexistent.so",
        reference: ref.artifact!,
        signature,
        seed: 1,
        atol: 1e-3,
        rtol: 1e-3,
      })));
      results.forEach((res, i) => {
        if (res.errorKind !== "none") errors[i] = `${res.errorKind}: ${res.error}`;
        times[i].push(...res.times);
      });
    }
  } finally {
    await runner.close();
  }
  return POINTS.map((point, i) => {
    const sorted = [...times[i]].sort((a, b) => a - b);
    const gflops = (s: number | undefined) => s ? w.flops / s / 1e9 : 0;
    return {
      size,
      point,
      best_gflops: gflops(sorted[0]),
      median_gflops: gflops(sorted[Math.floor(sorted.length / 2)]),
      ...(errors[i] || built[i].errorKind !== "none" ? { error: errors[i] ?? built[i].error } : {}),
    };
  });
}

if (import.meta.main) {
  await runCommand("matmul_kernels", async (argv) => {
    const values = parseFlags(argv, {
      sizes: { type: "string", default: "512,1024" },
      rounds: { type: "string" },
      threads: { type: "string" },
    }, USAGE);
    const sizes = values.sizes.split(",").map(Number);
    const rounds = Number(values.rounds ?? 3);
    const threads = Number(values.threads ?? 2);
    const lanes = vectorLanes();
    const peak = await fmaPeak(lanes);
    console.log(
      `FMA throughput available now (${lanes}-float vectors): ${peak[0]} GFLOP/s (1 thread), ${
        peak[1]
      } (2)`,
    );
    const figures: KernelFigure[] = [];
    for (const size of sizes) {
      for (const f of await measureSize(size, rounds, threads)) {
        figures.push(f);
        const knobs = Object.entries(f.point).map(([k, v]) => `${k}=${v}`).join(" ");
        console.log(
          `matmul ${size} (${threads} threads): best ${f.best_gflops.toFixed(1)} median ${
            f.median_gflops.toFixed(1)
          } GFLOP/s  ${knobs}${f.error ? `  ERROR ${f.error}` : ""}`,
        );
      }
    }
    console.log(JSON.stringify({ threads, lanes, peak_1t: peak[0], peak_2t: peak[1], figures }));
  });
}
