/**
 * tunebook's best CUDA kernels against cuBLAS on the same GPU (issue 15,
 * item 4; a skeleton). Without a GPU it says so and exits 0. With one, it
 * builds `peers/gpu_cublas.cu` with nvcc (cuBLAS loaded with dlopen from the
 * first of `--cublas`, `$TB_CUBLAS` and the usual places that exists), times
 * cublasSgemm in FP32 and TF32 tensor-op math for each matmul size
 * (`--repeat` repeats, each at least `--min-repeat-ms`, median), and prints
 * GFLOP/s beside tunebook's best valid CUDA record of the same workload in
 * `--db`, with the ratio. Not yet here: cuDNN (ResNet-18 convolutions), dense
 * 1024³, and re-timing tunebook's best in the same process.
 *
 * ```sh
 * deno run -A bench/gpu_peers.ts --db runs.db --sizes 1024,4096
 * ```
 * @module
 */
import { median } from "../ir/stats.ts";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createCudaRunner } from "../measure/cuda_runner.ts";
import { createNvccBuilder } from "../measure/nvcc_builder.ts";

const HARNESS = fileURLToPath(new URL("./peers/gpu_cublas.cu", import.meta.url));
const CACHE = fileURLToPath(new URL("../.cache/peers/", import.meta.url));

/** Where cuBLAS is looked for when `--cublas` and `$TB_CUBLAS` are not given. */
export const CUBLAS_CANDIDATES: readonly string[] = [
  "/usr/local/cuda/lib64/libcublas.so.13",
  "/usr/local/cuda/lib64/libcublas.so.12",
  "/usr/local/cuda/lib64/libcublas.so",
  "/usr/lib/x86_64-linux-gnu/libcublas.so.13",
  "/usr/lib/x86_64-linux-gnu/libcublas.so.12",
];

/** Best valid CUDA GFLOP/s per workload key (`matmul:1024,1024,1024`) in a records database. */
export function bestCudaGflops(db: string): Map<string, number> {
  const sql = new DatabaseSync(db, { readOnly: true });
  try {
    const rows = sql.prepare(
      `SELECT w.key AS key, MAX(r.gflops) AS gflops FROM results r
       JOIN candidates c ON c.id = r.candidate_id JOIN runs u ON u.id = c.run_id
       JOIN workloads w ON w.id = u.workload_id
       WHERE u.target = 'cuda' AND r.error_kind = 'none' GROUP BY w.key`,
    ).all() as { key: string; gflops: number }[];
    return new Map(rows.map((r) => [r.key, r.gflops]));
  } finally {
    sql.close();
  }
}

/** Runs the bench; returns the exit status. */
export async function main(argv: string[]): Promise<number> {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      db: { type: "string" },
      sizes: { type: "string", default: "1024,4096" },
      cublas: { type: "string" },
      repeat: { type: "string", default: "5" },
      "min-repeat-ms": { type: "string", default: "100" },
    },
  });
  const sizes = v.sizes!.split(",").map(Number);
  if (!sizes.every((s) => Number.isInteger(s) && s > 0 && s <= 16384)) {
    console.error("gpu_peers: --sizes takes integers in 1..16384, e.g. 1024,4096");
    return 2;
  }
  const repeat = Number(v.repeat), minMs = Number(v["min-repeat-ms"]);
  if (!Number.isInteger(repeat) || repeat < 1 || !(minMs >= 0)) {
    console.error("gpu_peers: --repeat takes an integer >= 1 and --min-repeat-ms a number >= 0");
    return 2;
  }
  const [built] = await createNvccBuilder({ cacheDir: CACHE }).build([
    { source: await Deno.readTextFile(HARNESS) },
  ]);
  if (built.errorKind !== "none") {
    console.error(`gpu_peers: ${HARNESS} did not build: ${built.error}`);
    return 1;
  }
  const device = await createCudaRunner().device(built.artifact!);
  if (!device?.ok) {
    console.log(`no GPU: ${device?.message ?? "no CUDA device"}; nothing measured`);
    return 0;
  }
  const cublas = [v.cublas, Deno.env.get("TB_CUBLAS"), ...CUBLAS_CANDIDATES]
    .find((p) => p !== undefined && p !== "" && exists(p));
  const best = v.db ? bestCudaGflops(v.db) : new Map<string, number>();
  const lib = Deno.dlopen(built.artifact!, {
    tb_cublas_sgemm: {
      parameters: ["buffer", "i32", "i32", "i32", "i32", "i32", "f64", "buffer"],
      result: "i32",
    },
    tb_peer_message: { parameters: [], result: "pointer" },
  });
  const out: Record<string, unknown>[] = [];
  try {
    console.log("| workload | tunebook best | cuBLAS FP32 | ratio | cuBLAS TF32 | ratio |");
    console.log("| --- | --- | --- | --- | --- | --- |");
    for (const n of sizes) {
      const flops = 2 * n * n * n;
      const row: Record<string, unknown> = { workload: `matmul:${n},${n},${n}` };
      row.tunebook = best.get(row.workload as string) ?? null;
      for (const [name, tf32] of [["fp32", 0], ["tf32", 1]] as const) {
        if (!cublas) {
          row[name] = "unavailable: no libcublas (give --cublas PATH)";
          continue;
        }
        const ms = new Float64Array(repeat);
        const path = new TextEncoder().encode(`${cublas}\0`);
        const rc = lib.symbols.tb_cublas_sgemm(path, n, n, n, tf32, repeat, minMs, ms);
        row[name] = rc === 0
          ? flops / (median([...ms]) * 1e-3) / 1e9
          : `error: ${new Deno.UnsafePointerView(lib.symbols.tb_peer_message()!).getCString()}`;
      }
      const cell = (x: unknown) => typeof x === "number" ? x.toFixed(0) : String(x ?? "none");
      const ratio = (x: unknown) =>
        typeof x === "number" && typeof row.tunebook === "number"
          ? (row.tunebook / x).toFixed(3)
          : "-";
      console.log(
        `| ${row.workload} | ${cell(row.tunebook)} | ${cell(row.fp32)} | ${ratio(row.fp32)} | ${
          cell(row.tf32)
        } | ${ratio(row.tf32)} |`,
      );
      out.push(row);
    }
  } finally {
    lib.close();
  }
  console.log(JSON.stringify({ device: device.message, cublas: cublas ?? null, rows: out }));
  return 0;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
