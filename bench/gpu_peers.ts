/**
 * tunebook's best CUDA kernels against cuBLAS and cuDNN on the same GPU
 * (issue 15, item 4). Without a GPU it says so and exits 0. With one, it
 * builds `peers/gpu_cublas.cu` with nvcc (the libraries are loaded with
 * dlopen, found by `gpu_peer_libs.ts`: `--cublas` / `--cudnn`, `$TB_CUBLAS` /
 * `$TB_CUDNN`, the CUDA toolkit, Debian's packages or PyTorch's `nvidia-*`
 * wheels) and times, in FP32 and in TF32 tensor-core math:
 *
 * - matmul `--sizes` (cublasSgemm);
 * - dense `--dense M,N,K` with bias and ReLU (cublasSgemm with the weight
 *   transposed, then a bias + ReLU kernel: PyTorch's Linear + ReLU);
 * - the convolutions of `--convs` (`resnet18`: ResNet-18's eleven, `conv2`:
 *   only 1x64x56x56 with 64 3x3 filters, pad 1; `none`) with cuDNN, the
 *   fastest forward algorithm of each (FP32: `CUDNN_FMA_MATH`); without cuDNN
 *   the rows say "cuDNN not found" and the rest is timed.
 *
 * Each: `--repeat` repeats of at least `--min-repeat-ms`, median, GFLOP/s
 * (the workload's flops as tunebook counts them), beside tunebook's best
 * valid CUDA record of the same workload in the `--db` databases (several
 * may be given) that computes in a comparable arithmetic, with the ratio:
 * against FP32 only FP32 kernels, against TF32 FP32 or TF32 ones
 * (`ir/gemm_math.ts`); kernels with FP16 or BF16 inputs are shown beside,
 * against neither. Prints a Markdown table, then one line of JSON. Not
 * here: re-timing tunebook's best in the same process.
 *
 * ```sh
 * deno run -A bench/gpu_peers.ts --db a.db --db b.db --sizes 1024,4096 --convs resnet18
 * ```
 * @module
 */
import { median } from "../ir/stats.ts";
import { comparableMath, type MathKind, mathOfTrace } from "../ir/gemm_math.ts";
import { parseTrace } from "../ir/trace.ts";
import { conv2d, denseBiasRelu, matmul, type Workload } from "../ir/workloads.ts";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { createCudaRunner } from "../measure/cuda_runner.ts";
import { createNvccBuilder } from "../measure/nvcc_builder.ts";
import { CUBLAS, CUDNN, findLibrary, resnet18Convs } from "./gpu_peer_libs.ts";
import { HelpRequest, parseFlags } from "../cli/args.ts";

/** What `--help` prints: the command lines above. */
const USAGE = `usage:
  deno run -A bench/gpu_peers.ts --db a.db --db b.db --sizes 1024,4096 --convs resnet18`;

/** The harness the peers are timed with. */
export const HARNESS: string = fileURLToPath(new URL("./peers/gpu_cublas.cu", import.meta.url));
const CACHE = fileURLToPath(new URL("../.cache/peers/", import.meta.url));

/** FFI symbols of the harness. */
export const PEER_SYMBOLS = {
  tb_cublas_sgemm: {
    parameters: ["buffer", "i32", "i32", "i32", "i32", "i32", "f64", "buffer"],
    result: "i32",
  },
  tb_cublas_dense: {
    parameters: ["buffer", "i32", "i32", "i32", "i32", "i32", "f64", "buffer"],
    result: "i32",
  },
  tb_cudnn_conv: {
    parameters: [
      ...["buffer", "i32", "i32", "i32", "i32", "i32", "i32", "i32", "i32", "i32"],
      ...["i32", "i32", "f64", "buffer", "buffer"],
    ],
    result: "i32",
  },
  tb_cudnn_version: { parameters: ["buffer"], result: "i64" },
  tb_peer_message: { parameters: [], result: "pointer" },
} as const;

/** tunebook's best GFLOP/s of one workload, per kind of arithmetic its kernels used. */
export type BestByMath = Partial<Record<MathKind, number>>;

/**
 * Best valid CUDA GFLOP/s per workload key (`matmul:1024,1024,1024`) and per
 * kind of arithmetic (`ir/gemm_math.ts`: the record's `gemm.mma`, FP32 for
 * loop-nest kernels) over the records databases `dbs`.
 */
export function bestCudaGflops(...dbs: string[]): Map<string, BestByMath> {
  const best = new Map<string, BestByMath>();
  for (const db of dbs) {
    const sql = new DatabaseSync(db, { readOnly: true });
    try {
      const rows = sql.prepare(
        `SELECT w.key AS key, c.trace AS trace, MAX(r.gflops) AS gflops FROM results r
         JOIN candidates c ON c.id = r.candidate_id JOIN runs u ON u.id = c.run_id
         JOIN workloads w ON w.id = u.workload_id
         WHERE u.target = 'cuda' AND r.error_kind = 'none' AND r.gflops IS NOT NULL
         GROUP BY w.key, c.trace_hash`,
      ).all() as { key: string; trace: string; gflops: number }[];
      for (const r of rows) {
        const kind = mathOfTrace(parseTrace(r.trace));
        const b = best.get(r.key) ?? {};
        b[kind] = Math.max(b[kind] ?? 0, r.gflops);
        best.set(r.key, b);
      }
    } finally {
      sql.close();
    }
  }
  return best;
}

/**
 * tunebook's best that may stand against a peer computing in `peer`
 * ({@link comparableMath}: FP32 kernels against FP32, FP32 or TF32 ones
 * against TF32), or null when there is none.
 */
export function comparableBest(b: BestByMath | undefined, peer: "fp32" | "tf32"): number | null {
  const xs = Object.entries(b ?? {}).filter(([k]) => comparableMath(k as MathKind, peer));
  return xs.length ? Math.max(...xs.map(([, g]) => g as number)) : null;
}

/** One row of the comparison: a workload, its peer, and the GFLOP/s (or why none). */
export interface PeerRow {
  workload: string;
  peer: "cuBLAS" | "cuDNN";
  /** tunebook's best per kind of arithmetic (empty: no valid record). */
  tunebook: BestByMath;
  fp32: number | string;
  tf32: number | string;
  /** cuDNN's forward algorithm kept, per math (cudnnConvolutionFwdAlgo_t). */
  algo?: { fp32?: number; tf32?: number };
}

/** The workloads compared, from the command line; a RangeError names a bad flag. */
export function peerWorkloads(o: { sizes: string; dense: string; convs: string }): Workload[] {
  const dims = (flag: string, text: string, n?: number) => {
    const xs = text.split(",").map(Number);
    if (!xs.every((x) => Number.isInteger(x) && x > 0 && x <= 16384) || (n && xs.length !== n)) {
      throw new RangeError(
        `--${flag} takes ${n ?? "some"} integers in 1..16384 separated by commas, got "${text}"`,
      );
    }
    return xs;
  };
  const out = dims("sizes", o.sizes).map((n) => matmul(n, n, n));
  if (o.dense !== "none") {
    const [M, N, K] = dims("dense", o.dense, 3);
    out.push(denseBiasRelu(M, N, K));
  }
  if (o.convs === "resnet18") out.push(...resnet18Convs());
  else if (o.convs === "conv2") out.push(conv2d(1, 64, 56, 56, 64, 3, 3, 1, 1));
  else if (o.convs !== "none") {
    throw new RangeError(`--convs takes resnet18, conv2 or none, got "${o.convs}"`);
  }
  return out;
}

/** Runs the bench; returns the exit status (`--help`: prints the usage, 0). */
export async function main(argv: string[]): Promise<number> {
  let v;
  try {
    v = parseFlags(argv, {
      db: { type: "string", multiple: true, default: [] },
      sizes: { type: "string", default: "1024,4096" },
      dense: { type: "string", default: "1024,1024,1024" },
      convs: { type: "string", default: "resnet18" },
      cublas: { type: "string" },
      cudnn: { type: "string" },
      repeat: { type: "string", default: "5" },
      "min-repeat-ms": { type: "string", default: "100" },
    }, USAGE);
  } catch (e) {
    if (e instanceof HelpRequest) {
      console.log(e.message);
      return 0;
    }
    console.error(`gpu_peers: ${(e as Error).message}`);
    return 2;
  }
  let workloads: Workload[];
  try {
    workloads = peerWorkloads({ sizes: v.sizes!, dense: v.dense!, convs: v.convs! });
  } catch (e) {
    console.error(`gpu_peers: ${(e as Error).message}`);
    return 2;
  }
  const repeat = Number(v.repeat), minMs = Number(v["min-repeat-ms"]);
  if (!Number.isInteger(repeat) || repeat < 1 || !(minMs >= 0)) {
    console.error("gpu_peers: --repeat takes an integer >= 1 and --min-repeat-ms a number >= 0");
    return 2;
  }
  const missing = v.db!.find((d) => !isFile(d));
  if (missing) {
    console.error(`gpu_peers: --db ${missing}: no such file`);
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
  const cublas = findLibrary(CUBLAS, v.cublas);
  const cudnn = findLibrary(CUDNN, v.cudnn);
  const best = bestCudaGflops(...v.db!);
  const lib = Deno.dlopen(built.artifact!, PEER_SYMBOLS);
  const cstr = (s: string) => new TextEncoder().encode(`${s}\0`);
  const message = () => new Deno.UnsafePointerView(lib.symbols.tb_peer_message()!).getCString();
  const rows: PeerRow[] = [];
  let cudnnVersion: number | null = null;
  try {
    if (cudnn) cudnnVersion = Number(lib.symbols.tb_cudnn_version(cstr(cudnn))) || null;
    console.log(
      "| workload | peer | tunebook FP32 | peer FP32 | ratio | tunebook FP32/TF32 | peer TF32 | ratio | tunebook FP16/BF16 inputs |",
    );
    console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (const w of workloads) {
      const key = `${w.name}:${w.shape.join(",")}`;
      const peer = w.name === "conv2d" ? "cuDNN" : "cuBLAS";
      const row: PeerRow = {
        workload: key,
        peer,
        tunebook: best.get(key) ?? {},
        fp32: "",
        tf32: "",
      };
      for (const [name, tf32] of [["fp32", 0], ["tf32", 1]] as const) {
        const path = peer === "cuDNN" ? cudnn : cublas;
        if (!path) {
          row[name] = peer === "cuDNN"
            ? "cuDNN not found (give --cudnn PATH)"
            : "cuBLAS not found (give --cublas PATH)";
          continue;
        }
        const ms = new Float64Array(repeat), algo = new Int32Array(1);
        const [a, b, c] = w.shape;
        const rc = w.name === "conv2d"
          ? lib.symbols.tb_cudnn_conv(cstr(path), ...shape9(w), tf32, repeat, minMs, ms, algo)
          : w.name === "dense"
          ? lib.symbols.tb_cublas_dense(cstr(path), a, b, c, tf32, repeat, minMs, ms)
          : lib.symbols.tb_cublas_sgemm(cstr(path), a, b, c, tf32, repeat, minMs, ms);
        row[name] = rc === 0 ? w.flops / (median([...ms]) * 1e-3) / 1e9 : `error: ${message()}`;
        if (rc === 0 && peer === "cuDNN") row.algo = { ...row.algo, [name]: algo[0] };
      }
      console.log(tableRow(row));
      rows.push(row);
    }
  } finally {
    lib.close();
  }
  console.log(JSON.stringify({
    device: device.message,
    cublas: cublas ?? null,
    cudnn: cudnn ?? null,
    cudnnVersion,
    rows: rows.map((r) => ({ ...r, ...comparison(r) })),
  }));
  return 0;
}

/**
 * A row's comparable bests ({@link comparableBest}) and their ratios to the
 * peer's GFLOP/s in the same math (null when either is missing).
 */
function comparison(r: PeerRow) {
  const tunebookFp32 = comparableBest(r.tunebook, "fp32");
  const tunebookTf32 = comparableBest(r.tunebook, "tf32");
  const over = (mine: number | null, peer: number | string) =>
    typeof peer === "number" && mine !== null ? mine / peer : null;
  return {
    tunebookFp32,
    tunebookTf32,
    ratioFp32: over(tunebookFp32, r.fp32),
    ratioTf32: over(tunebookTf32, r.tf32),
  };
}

function tableRow(r: PeerRow): string {
  const cell = (x: unknown) => typeof x === "number" ? x.toFixed(0) : String(x ?? "none");
  const q = (x: number | null) => x === null ? "-" : x.toFixed(3);
  const c = comparison(r);
  const half = Math.max(r.tunebook.fp16 ?? 0, r.tunebook.bf16 ?? 0);
  return `| ${r.workload} | ${r.peer} | ${cell(c.tunebookFp32)} | ${cell(r.fp32)} | ${
    q(c.ratioFp32)
  } | ${cell(c.tunebookTf32)} | ${cell(r.tf32)} | ${q(c.ratioTf32)} | ${
    half > 0 ? half.toFixed(0) : "none"
  } |`;
}

/** A conv2d workload's shape as the harness takes it (N, C, H, W, F, KH, KW, stride, pad). */
function shape9(
  w: Workload,
): [number, number, number, number, number, number, number, number, number] {
  const s = w.shape;
  return [s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]];
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
