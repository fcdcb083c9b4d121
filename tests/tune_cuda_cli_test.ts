/**
 * `deno task tune --target cuda`: candidates are built with nvcc and their
 * ptxas resources printed. On a machine without a GPU (as the CUDA runtime
 * reports it) every candidate is recorded as no_device and the command ends
 * with one clear message and exit status 3; on a machine with one, every
 * candidate is checked and timed and the command exits 0.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TUNE = join(ROOT, "cli/tune.ts");
const CACHE_ENV = { TUNEBOOK_CACHE: join(ROOT, ".cache/kernels") };

/** What the CUDA runtime says of this machine: a device count, or the error of counting. */
async function deviceStatus(dir: string): Promise<{ ok: boolean; message: string }> {
  const { createNvccBuilder } = await import("../measure/nvcc_builder.ts");
  const { createCudaRunner } = await import("../measure/cuda_runner.ts");
  const [b] = await createNvccBuilder({ cacheDir: dir }).build([{
    source: "#include <cuda_runtime.h>\n" +
      'extern "C" int tb_cuda_device_count(void) { int n = 0; cudaError_t e = ' +
      "cudaGetDeviceCount(&n); return e == cudaSuccess ? n : -(int)e; }\n" +
      'extern "C" const char *tb_cuda_error_string(int c) { return cudaGetErrorString((cudaError_t)c); }\n',
  }]);
  assert.equal(b.errorKind, "none", b.error ?? "");
  const status = await createCudaRunner().device(b.artifact!);
  return { ok: status!.ok, message: status!.message };
}

async function tune(args: string[], cwd: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", TUNE, ...args],
    cwd,
    env: CACHE_ENV,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("tune --target cuda builds with nvcc, prints resources, and records no_device (exit 3) or checked times (exit 0) as the device status says", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-tune-cuda-" });
  try {
    const db = join(dir, "r.db");
    const common = ["--target", "cuda", "--workload", "matmul", "--shape", "64,64,64", "--db", db];
    const device = await deviceStatus(join(dir, "probe"));
    const exit = device.ok ? 0 : 3;
    const r = await tune([...common, "--trials", "3", "--batch", "2"], dir);
    assert.equal(r.code, exit, r.stderr);
    const built = r.stderr.match(/^nvcc #\d+: tb_k\d \d+ regs, \d+ B smem, spills \d+\/\d+ B/gm);
    assert.equal(built?.length, 3, r.stderr);
    const line = JSON.parse(r.stdout);
    if (device.ok) {
      assert.deepEqual([line.target, line.trials, line.valid, line.errors], ["cuda", 3, 3, 0]);
      assert.ok(line.best_gflops > 0, r.stdout);
    } else {
      const final = r.stderr.match(/^tune: no CUDA (driver|device).*$/gm);
      assert.equal(final?.length, 1, r.stderr);
      assert.ok(final![0].startsWith(`tune: ${device.message}`), final![0]);
      assert.match(final![0], /Built and checked 3 candidates with nvcc; none could run/);
      assert.deepEqual([line.target, line.trials, line.valid, line.errors], ["cuda", 3, 0, 3]);
    }
    // The knob strategies search the GPU template.
    const g = await tune([...common, "--trials", "2", "--strategy", "grid", "--quiet"], dir);
    assert.equal(g.code, exit, g.stderr);
    assert.equal(g.stderr.match(/^nvcc #/gm), null, "--quiet prints no build lines");
    const sql = new DatabaseSync(db);
    try {
      const rows = sql.prepare(
        "SELECT r.error_kind AS kind, r.error AS error, c.trace AS trace FROM results r JOIN candidates c ON c.id = r.candidate_id",
      ).all() as { kind: string; error: string; trace: string }[];
      assert.equal(rows.length, 5);
      for (const row of rows) {
        if (device.ok) {
          assert.equal(row.kind, "none", row.error);
        } else {
          assert.equal(row.kind, "no_device");
          assert.match(row.error, /^no CUDA (driver|device).*; ptxas: tb_k\d \d+ regs/);
        }
        // Loop-nest GPU schedules bind loops; GEMM template points annotate gemm.* pragmas.
        assert.match(row.trace, /"op":"bind"|"key":"gemm\./);
      }
      const runs = sql.prepare("SELECT target, compiler FROM runs").all() as {
        target: string;
        compiler: string;
      }[];
      assert.deepEqual(runs.map((x) => x.target), ["cuda", "cuda"]);
      assert.match(runs[0].compiler, /release \d+\.\d+.*nvcc .*-arch=sm_90/);
    } finally {
      sql.close();
    }
    const bad = await tune([...common, "--strategy", "grid", "--template", "matmul"], dir);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Unknown template "matmul" for target cuda; known: matmul-gpu/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tune --flush-l2 is stored with a cuda run, checked on --resume, and refused for target cpu", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-tune-flush-" });
  try {
    const db = join(dir, "r.db");
    const common = ["--workload", "matmul", "--shape", "32,32,32", "--trials", "1", "--quiet"];
    const r = await tune([...common, "--target", "cuda", "--flush-l2", "--db", db], dir);
    assert.ok([0, 3].includes(r.code), r.stderr);
    const sql = new DatabaseSync(db);
    try {
      const [run] = sql.prepare("SELECT config FROM runs").all() as { config: string }[];
      assert.equal(JSON.parse(run.config).flushL2, true);
    } finally {
      sql.close();
    }
    // A run started with the flush resumed without it (and the other way round) is a conflict.
    const other = join(dir, "other.db");
    const plain = await tune([...common, "--target", "cuda", "--db", other], dir);
    assert.ok([0, 3].includes(plain.code), plain.stderr);
    const resumed = await tune(["--resume", "--flush-l2", "--db", other], dir);
    assert.equal(resumed.code, 2, resumed.stderr);
    assert.match(
      resumed.stderr,
      /--flush-l2 true contradicts run 1, which was started with --flush-l2 false/,
    );
    const cpu = await tune([...common, "--flush-l2", "--db", join(dir, "cpu.db")], dir);
    assert.equal(cpu.code, 2);
    assert.equal(
      cpu.stderr.trim(),
      "tune: --flush-l2: only target cuda flushes the L2 cache between repeats",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tune --math limits the arithmetic, measures the GEMM configurations first (--no-configs: not), and is checked on --resume", async () => {
  const { mathOfTrace } = await import("../ir/gemm_math.ts");
  const { gemmConfigs } = await import("../search/gemm_configs.ts");
  const { matmul } = await import("../ir/workloads.ts");
  const dir = await Deno.makeTempDir({ prefix: "tb-tune-math-" });
  try {
    const common = [
      ...["--target", "cuda", "--workload", "matmul", "--shape", "64,64,64"],
      ...["--trials", "4", "--batch", "4", "--quiet"],
    ];
    const db = join(dir, "r.db");
    const r = await tune([...common, "--math", "fp32", "--db", db], dir);
    assert.ok([0, 3].includes(r.code), r.stderr);
    const rows = (db: string) => {
      const sql = new DatabaseSync(db);
      try {
        const [run] = sql.prepare("SELECT config FROM runs").all() as { config: string }[];
        const traces = (sql.prepare("SELECT trace FROM candidates ORDER BY trial").all() as {
          trace: string;
        }[]).map((c) => JSON.parse(c.trace));
        return { config: JSON.parse(run.config), traces };
      } finally {
        sql.close();
      }
    };
    const { config, traces } = rows(db);
    assert.deepEqual([config.math, config.configs], [["fp32"], true]);
    assert.equal(traces.length, 4);
    assert.ok(traces.every((t) => mathOfTrace(t) === "fp32"));
    // The first is the 64x64x16 configuration (the 128-wide ones would be half empty).
    const w = matmul(64, 64, 64);
    const key = (t: unknown) => JSON.stringify(t);
    assert.equal(key(traces[0]), key(gemmConfigs(w, { math: ["fp32"] })[0].candidate.trace));
    const [first] = gemmConfigs(w, { math: ["fp32"] });
    assert.deepEqual([first.values["gemm.block_m"], first.values["gemm.block_n"]], [64, 64]);
    const resumed = await tune(["--resume", "--math", "tf32", "--db", db], dir);
    assert.equal(resumed.code, 2, resumed.stderr);
    assert.match(
      resumed.stderr,
      /--math tf32 contradicts run 1, which was started with --math fp32/,
    );
    // Without the configurations, the search's own samples come first.
    const plain = join(dir, "plain.db");
    const p = await tune([...common, "--no-configs", "--math", "tf32", "--db", plain], dir);
    assert.ok([0, 3].includes(p.code), p.stderr);
    const noConfigs = rows(plain);
    assert.equal(noConfigs.config.configs, undefined);
    assert.ok(noConfigs.traces.every((t) => mathOfTrace(t) === "tf32"));
    assert.ok(
      noConfigs.traces.every((t) => t.insts.some((i: { op: string }) => i.op !== "annotate")),
    );
    // A knob strategy on the gemm-gpu template measures the configuration as its own point.
    const knobDb = join(dir, "sa.db");
    const sa = await tune([...common, "--strategy", "sa", "--math", "fp32", "--db", knobDb], dir);
    assert.ok([0, 3].includes(sa.code), sa.stderr);
    const sql = new DatabaseSync(knobDb);
    try {
      const [c] = sql.prepare("SELECT knobs FROM candidates ORDER BY trial LIMIT 1").all() as {
        knobs: string | null;
      }[];
      const { gemmPointOf, gpuTemplateSpace } = await import("../search/templates/registry_gpu.ts");
      const t = gpuTemplateSpace("gemm-gpu", w, { math: ["fp32"] });
      assert.deepEqual(JSON.parse(c.knobs ?? "null"), gemmPointOf(t.space, first.values));
    } finally {
      sql.close();
    }
    for (
      const [args, message] of [
        [["--math", "fp32,tf33"], /^tune: --math takes kinds of arithmetic .*; got "tf33"$/],
        [["--math", "fp32", "--target", "cpu"], /^tune: --math: only target cuda /],
        [[
          "--math",
          "tf32",
          "--target",
          "cuda",
          "--workload",
          "depthwise_conv2d",
          "--shape",
          "1,8,9,9,3,3,1,1",
        ], /^tune: --math tf32: depthwise_conv2d has only FP32 GPU kernels; add fp32$/],
        [
          ["--math", "tf32", "--target", "cuda", "--strategy", "grid", "--template", "matmul-gpu"],
          /^tune: --template matmul-gpu: Template "matmul-gpu" computes in fp32/,
        ],
      ] as const
    ) {
      const bad = await tune(
        ["--workload", "matmul", "--shape", "64,64,64", "--db", join(dir, "bad.db"), ...args],
        dir,
      );
      assert.equal(bad.code, 2, bad.stderr);
      assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
      assert.match(bad.stderr.trim(), message);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
