/**
 * tunebook against its peers, in one run on the same shapes: tunebook's best
 * found kernel, OpenBLAS sgemm (AVX-512 kernels and the machine default),
 * oneDNN (matmul and convolution), Halide 14's three autoschedulers and a
 * naive loop. Prints a markdown table of GFLOP/s with ratios to the
 * reference peer ({@link referencePeer}: OpenBLAS AVX-512 for matmul, or
 * OpenBLAS's default kernels on a CPU without AVX-512; oneDNN for a
 * convolution), then one line of JSON with every figure.
 *
 * ```sh
 * deno run -A bench/peers.ts [--sizes 256,512,1024] [--convs conv2,conv1] [--threads 2] \
 *   [--db runs.db] [--trace best.json] [--tune N] [--peers naive,openblas-avx512,...] \
 *   [--warmup 1] [--repeat 5] [--min-repeat-ms 20] [--rounds 3]
 * ```
 *
 * `--convs` takes ResNet-18's named layers (`conv2`, `conv1`), NCHW shapes
 * `N,C,H,W,F,KH,KW,stride,pad`, and other convolution workloads written
 * `NAME:SHAPE` ({@link CONV_WORKLOADS}: a depthwise layer is
 * `depthwise_conv2d:1,96,112,112,3,3,2,1`), separated by `;` (or `,` before a
 * name).
 *
 * Each peer is a small C/C++ harness under bench/peers/, compiled on first use
 * and cached under `.cache/peers/` (Halide pipelines too: generated with
 * Halide's autoscheduler, parallelism = threads, and compiled ahead of time).
 * Every harness times the same way (bench/peers/timing.h: warm-up calls, then
 * repeats of enough calls to last `--min-repeat-ms`), runs as its own process,
 * one at a time, and a round's figure is the median repeat; `--rounds` runs
 * every peer that many times, interleaved, and keeps each peer's best round
 * (the table), and prints tunebook's ratio to its reference peer round by
 * round: the median and range of
 * ratios measured seconds apart. A peer whose library or compiler is missing
 * is reported as `unavailable: <reason>`; a peer that does not support a
 * workload (OpenBLAS has no convolution) as `n/a`.
 * Halide's convolution reads an input already zero-padded (as Halide's
 * apps/conv_layer does): with a boundary condition instead, Adams2019 ran for
 * minutes and gigabytes on ResNet-18 conv2. In both Halide pipelines the
 * reduction is a Func of its own that the output reads (as in Halide's apps):
 * written as an update of the output itself, it can only be scheduled at root
 * with the reduction loop innermost, and Adams2019 ran ~7x slower on matmul.
 *
 * tunebook's kernel is the best record of the workload in `--db` (any run on
 * target cpu) or the best of the traces in `--trace`, rebuilt and timed by the
 * same harness; without either, `--tune N` tunes N random trials first,
 * otherwise the cell says `none`.
 * @module
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { median, RecordsDB } from "../datasets/db.ts";
import { cpuFlags } from "../ir/target_cpu.ts";
import { parseTrace, type Trace } from "../ir/trace.ts";
import { createWorkload, type Workload } from "../ir/workloads.ts";
import { createBuilder, exists, sha256Hex } from "../measure/builder.ts";
import { howItEnded, outputWithin } from "../measure/subprocess.ts";
import { kernelSource, signatureOf } from "../measure/kernel_source.ts";
import { runSession } from "../tuner/session.ts";
import { confirmedBest } from "../tuner/finalists.ts";
import { nonNegativeInt, parseFlags, positiveInt, runCommand, UsageError } from "../cli/args.ts";
import { ensureSetupGroup } from "../cli/setup_group.ts";

/** Directory of the harness sources. */
export const PEERS_DIR: string = fileURLToPath(new URL("./peers/", import.meta.url));
/** Default cache of compiled harnesses and Halide pipelines. */
export const DEFAULT_CACHE: string = fileURLToPath(new URL("../.cache/peers/", import.meta.url));
/** Where Debian's libhalide14-0-dev puts the autoscheduler plugins. */
export const HALIDE_PLUGINS = "/usr/lib/x86_64-linux-gnu/halide14";

/** Seconds an autoscheduler may take to generate one pipeline before it is reported unavailable. */
export const HALIDE_GEN_SECONDS = 300;

/** Every peer, in table order. */
export const PEERS = [
  "tunebook",
  "openblas-avx512",
  "openblas-default",
  "onednn",
  "halide-adams2019",
  "halide-mullapudi2016",
  "halide-li2018",
  "naive",
] as const;
/** A peer's name. */
export type Peer = typeof PEERS[number];

/** Each workload the harnesses take, and its problem's arguments from its shape. */
const PROBLEMS: Record<string, (s: string[]) => string[]> = {
  matmul: (s) => ["matmul", ...s],
  conv2d: (s) => ["conv", ...s.slice(0, 9)],
  conv2d_nchwc: (s) => ["conv", ...s.slice(0, 9)],
  group_conv2d: (s) => ["gconv", ...s.slice(0, 10)],
  depthwise_conv2d: depthwiseProblem,
  depthwise_conv2d_nchwc: depthwiseProblem,
};

/** A depthwise convolution as a grouped one: groups = C = F. */
function depthwiseProblem(s: string[]): string[] {
  const [N, C, H, W, KH, KW, stride, pad] = s;
  return ["gconv", N, C, H, W, C, KH, KW, stride, pad, C];
}

/** Convolution workloads `--convs NAME:SHAPE` takes (the harnesses' `conv` and `gconv` problems). */
export const CONV_WORKLOADS: readonly string[] = Object.keys(PROBLEMS).filter((n) =>
  n !== "matmul"
);

/** The ResNet-18 layers the bench knows by name. */
export const NAMED_CONVS: Record<string, number[]> = {
  conv2: [1, 64, 56, 56, 64, 3, 3, 1, 1],
  conv1: [1, 3, 224, 224, 64, 7, 7, 2, 3],
};

/** One cell of the table. */
export type Figure =
  | { gflops: number; seconds: number; note?: string }
  | { unavailable: string }
  | { na: string }
  | { none: string };

/** How every harness times. */
export interface PeerTiming {
  warmup: number;
  repeat: number;
  minRepeatMs: number;
}

/** A compiled harness, or why there is none. */
type Tool = { path: string } | { unavailable: string };

const decoder = new TextDecoder();

async function run(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutSeconds = 600,
): Promise<{ ok: boolean; stdout: string; stderr: string; timedOut?: boolean }> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd, { args, env, stdin: "null", stdout: "piped", stderr: "piped" })
      .spawn();
  } catch (e) {
    return { ok: false, stdout: "", stderr: `${cmd}: ${(e as Error).message}` };
  }
  const { output: out, timedOut } = await outputWithin(child, timeoutSeconds);
  const stopped = out.signal ? `\n${howItEnded(cmd, out)}` : "";
  return {
    ok: out.success,
    stdout: decoder.decode(out.stdout),
    stderr: timedOut ? `killed after ${timeoutSeconds} s` : decoder.decode(out.stderr) + stopped,
    timedOut,
  };
}

/** The last lines of a tool's complaint, on one line. */
function tail(text: string, lines = 3): string {
  return text.trim().split("\n").slice(-lines).join(" / ").slice(0, 300);
}

/** Why a harness did not compile, in words a user can act on (names the package to install). */
export function compileFailure(what: string, stderr: string, pkg: string): string {
  const missing = stderr.match(/fatal error: ([\w./]+): No such file/) ??
    stderr.match(/cannot find (-l[\w+.-]+)/);
  return missing
    ? `${what}: ${missing[1]} not found (apt-get install ${pkg}, or bash scripts/setup.sh peers)`
    : `${what} did not compile: ${tail(stderr)}`;
}

/**
 * Compiles the harnesses (cached by content hash) and runs them. Builds run
 * at most once per process; concurrent callers share them.
 */
export class PeerHarnesses {
  #tools = new Map<string, Promise<Tool>>();
  #version?: Promise<string>;

  /** Harnesses compile into `cacheDir`. */
  constructor(readonly cacheDir: string = DEFAULT_CACHE) {}

  #compilerVersion(): Promise<string> {
    this.#version ??= run("g++", ["--version"]).then((r) => r.stdout.split("\n")[0]);
    return this.#version;
  }

  /** Compiles `sources` (under bench/peers/) with `args` into a cached executable or object. */
  async #compile(
    name: string,
    files: string[],
    args: string[],
    pkg: string,
    extraKey = "",
  ): Promise<Tool> {
    const texts = await Promise.all(
      [...files, "timing.h"].map((f) => Deno.readTextFile(join(PEERS_DIR, f))),
    );
    const key = await sha256Hex(
      [...texts, ...args, extraKey, await this.#compilerVersion()].join("\u0000"),
    );
    const out = join(this.cacheDir, `${name}-${key.slice(0, 16)}`);
    if (await exists(out)) return { path: out };
    await Deno.mkdir(this.cacheDir, { recursive: true });
    const tmp = `${out}.tmp-${crypto.randomUUID()}`;
    const cc = files[0].endsWith(".cpp") ? "g++" : "gcc";
    const r = await run(cc, [
      ...files.map((f) => join(PEERS_DIR, f)),
      `-I${PEERS_DIR}`,
      "-o",
      tmp,
      ...args,
    ]);
    if (!r.ok) {
      await Deno.remove(tmp).catch(() => {});
      return { unavailable: compileFailure(`${name} harness`, r.stderr, pkg) };
    }
    await Deno.rename(tmp, out);
    return { path: out };
  }

  #tool(name: string, make: () => Promise<Tool>): Promise<Tool> {
    let t = this.#tools.get(name);
    if (!t) {
      t = make();
      this.#tools.set(name, t);
    }
    return t;
  }

  /**
   * The harness of a library peer (`naive`, `openblas`, `onednn`, `tunebook`),
   * or `tiles`, which times several tunebook kernels interleaved (bench/tiles.ts).
   */
  harness(name: "naive" | "openblas" | "onednn" | "tunebook" | "tiles"): Promise<Tool> {
    const native = ["-O3", "-march=native"];
    return this.#tool(name, () => {
      switch (name) {
        case "naive":
          return this.#compile("naive", ["naive.c"], [...native, "-fopenmp"], "gcc");
        case "openblas":
          return this.#compile(
            "openblas",
            ["openblas.c"],
            ["-O2", "-I/usr/include/x86_64-linux-gnu/openblas-pthread", "-lopenblas"],
            "libopenblas-dev",
          );
        case "onednn":
          return this.#compile(
            "onednn",
            ["onednn.cpp"],
            ["-O2", "-std=c++17", "-ldnnl"],
            "libdnnl-dev",
          );
        case "tunebook":
          return this.#compile("tunebook", ["tunebook.c"], ["-O2", "-ldl"], "gcc");
        case "tiles":
          return this.#compile("tiles", ["tiles.c"], ["-O2", "-ldl"], "gcc");
      }
    });
  }

  /** The Halide pipeline of `scheduler` for `w`, generated, autoscheduled and linked. */
  halide(scheduler: string, w: Workload, parallelism: number): Promise<Tool> {
    const shape = w.shape.join(",");
    return this.#tool(`halide ${scheduler} ${w.name} ${shape} ${parallelism}`, async () => {
      try {
        await Deno.stat(HALIDE_PLUGINS);
      } catch {
        return {
          unavailable:
            `Halide 14 autoschedulers not found in ${HALIDE_PLUGINS} (apt-get install libhalide14-0-dev)`,
        };
      }
      const halideFlags = ["-O1", "-std=c++17", "-I/usr/include/halide14"];
      const gen = await this.#tool("halide_gen", () =>
        this.#compile(
          "halide_gen",
          ["halide_gen.cpp"],
          [...halideFlags, "-lHalide14", "-lpthread", "-ldl"],
          "libhalide14-0-dev",
        ));
      if ("unavailable" in gen) return gen;
      const driver = await this.#tool(
        "halide_run.o",
        () =>
          this.#compile(
            "halide_run.o",
            ["halide_run.cpp"],
            [...halideFlags, "-O2", "-c"],
            "libhalide14-0-dev",
          ),
      );
      if ("unavailable" in driver) return driver;
      const key = (await sha256Hex(
        `${gen.path}\u0000${driver.path}\u0000${scheduler}\u0000${shape}\u0000${parallelism}`,
      ))
        .slice(0, 16);
      const exe = join(this.cacheDir, `halide-${scheduler}-${w.name}-${key}`);
      if (await exists(exe)) return { path: exe };
      const prefix = `${exe}.tmp-${crypto.randomUUID()}`;
      const problem = w.name === "matmul"
        ? ["matmul", ...w.shape.map(String)]
        : ["conv", ...w.shape.map(String)];
      const g = await run(
        gen.path,
        [
          HALIDE_PLUGINS,
          scheduler,
          prefix,
          String(parallelism),
          ...problem,
        ],
        {},
        HALIDE_GEN_SECONDS,
      );
      try {
        if (!g.ok) return { unavailable: `Halide ${scheduler} failed: ${tail(g.stderr)}` };
        const l = await run("g++", [
          driver.path,
          `${prefix}.a`,
          "-o",
          `${prefix}.exe`,
          "-lpthread",
          "-ldl",
        ]);
        if (!l.ok) {
          return { unavailable: `Halide ${scheduler} pipeline did not link: ${tail(l.stderr)}` };
        }
        await Deno.rename(`${prefix}.exe`, exe);
        return { path: exe };
      } finally {
        for (const ext of [".a", ".h", ".exe"]) {
          await Deno.remove(`${prefix}${ext}`).catch(() => {});
        }
      }
    });
  }
}

/**
 * Harness arguments naming a workload: `matmul M N K`, `conv N C H W F KH KW
 * stride pad` (a blocked `conv2d_nchwc` too: the peers choose their own
 * layouts, oneDNN blocked ones) or `gconv N C H W F KH KW stride pad groups`
 * (grouped and depthwise convolutions, blocked or not); undefined for a
 * workload the harnesses do not know.
 *
 * @example
 * ```ts
 * import { problemArgs } from "./peers.ts";
 * import { createWorkload } from "../ir/workloads.ts";
 * const dw = createWorkload("depthwise_conv2d_nchwc", [1, 32, 112, 112, 3, 3, 1, 1, 16]);
 * if (problemArgs(dw)?.join(" ") !== "gconv 1 32 112 112 32 3 3 1 1 32") throw new Error();
 * ```
 */
export function problemArgs(w: Workload): string[] | undefined {
  return Object.hasOwn(PROBLEMS, w.name) ? PROBLEMS[w.name](w.shape.map(String)) : undefined;
}

/** Runs a harness and turns its JSON line into a figure (median repeat). */
export async function timeHarness(
  exe: string,
  args: string[],
  w: Workload,
  env: Record<string, string>,
): Promise<Figure> {
  const r = await run(exe, args, env);
  const line = r.stdout.trim().split("\n").at(-1) ?? "";
  let parsed: { times?: number[]; unavailable?: string } = {};
  try {
    parsed = JSON.parse(line);
  } catch {
    // Reported below.
  }
  if (parsed.unavailable) return { na: parsed.unavailable };
  if (!r.ok || !parsed.times?.length) {
    return { unavailable: `harness failed: ${tail(r.stderr) || "no output"}` };
  }
  const sorted = [...parsed.times].sort((a, b) => a - b);
  const seconds = sorted[(sorted.length - 1) >> 1];
  return { gflops: w.flops / seconds / 1e9, seconds };
}

/** Where tunebook's kernel comes from. */
export interface TunebookSource {
  /** Records database to take the best record of each workload from. */
  db?: string;
  /** Traces to take the best of (measured here). */
  traces?: Trace[];
  /** Trials of a brief random tuning run when neither gives a kernel. Default 0 (report none). */
  tune?: number;
  /** Kernel cache of the builder. */
  cacheDir: string;
}

/**
 * Best recorded trace of workload `w` in the database at `path` (any cpu
 * run; the newest re-timed finalists when there are some: `confirmedBest`).
 */
export function bestRecorded(
  path: string,
  w: Workload,
): { trace: Trace; gflops: number } | undefined {
  const db = RecordsDB.open(path);
  try {
    const b = confirmedBest(db, w);
    return b.trace && b.seconds
      ? { trace: parseTrace(JSON.parse(b.trace)), gflops: w.flops / b.seconds / 1e9 }
      : undefined;
  } finally {
    db.close();
  }
}

/** Options of {@link runPeers}. */
export interface PeersOptions {
  workloads: Workload[];
  peers: readonly Peer[];
  threads: number;
  timing: PeerTiming;
  tunebook: TunebookSource;
  cacheDir?: string;
  /** Rounds over all peers; each peer's figure is its best round. Default 1. */
  rounds?: number;
  /** Called with a line of progress (to stderr). */
  log?: (line: string) => void;
}

/** One workload's figures, by peer. */
export interface PeerRow {
  workload: Workload;
  /** Each peer's best round. */
  figures: Partial<Record<Peer, Figure>>;
  /** Each peer's GFLOP/s in every round (NaN for a round without a figure). */
  rounds?: Partial<Record<Peer, number[]>>;
}

/**
 * The peer tunebook is judged against on a workload: OpenBLAS with its
 * AVX-512 kernels for matmul (OpenBLAS with the machine's default kernels
 * when `figures` holds no AVX-512 figure, as on a CPU without AVX-512),
 * oneDNN for a convolution.
 *
 * @example
 * ```ts
 * import { referencePeer } from "./peers.ts";
 * import { createWorkload } from "../ir/workloads.ts";
 * const w = createWorkload("matmul", [8, 8, 8]);
 * if (referencePeer(w) !== "openblas-avx512") throw new Error();
 * const figures = { "openblas-avx512": { unavailable: "this CPU has no AVX-512" } };
 * if (referencePeer(w, figures) !== "openblas-default") throw new Error();
 * ```
 */
export function referencePeer(w: Workload, figures?: Partial<Record<Peer, Figure>>): Peer {
  if (w.name !== "matmul") return "onednn";
  const avx512 = figures?.["openblas-avx512"];
  return !figures || (avx512 && "gflops" in avx512) ? "openblas-avx512" : "openblas-default";
}

/** Why OpenBLAS's AVX-512 kernels cannot run here, or undefined when they can. */
export function avx512Missing(flags: Set<string> = cpuFlags()): string | undefined {
  return flags.size > 0 && !flags.has("avx512f")
    ? "this CPU has no AVX-512 (no avx512f flag): OpenBLAS's SkylakeX kernels would stop on an illegal instruction"
    : undefined;
}

/**
 * Ratios `a[i] / b[i]` of the rounds in which both have a figure (measured
 * seconds apart, so a burst of load on the shared cores tends to hit both):
 * their median, smallest and largest; undefined without such a round.
 *
 * @example
 * ```ts
 * import { roundRatios } from "./peers.ts";
 * const r = roundRatios([1, 2, undefined, 4], [1, 1, 1, 2]);
 * if (r?.median !== 2 || r.rounds !== 3) throw new Error();
 * ```
 */
export function roundRatios(
  a: readonly (number | undefined)[],
  b: readonly (number | undefined)[],
): { median: number; min: number; max: number; rounds: number } | undefined {
  const ratios = a.map((x, i) => (x ?? NaN) / (b[i] ?? NaN))
    .filter((r) => Number.isFinite(r) && r > 0);
  if (ratios.length === 0) return undefined;
  return {
    median: median(ratios),
    min: Math.min(...ratios),
    max: Math.max(...ratios),
    rounds: ratios.length,
  };
}

/** {@link roundRatios} of peers `a` and `b` in a row's rounds. */
export function pairedRatio(
  row: PeerRow,
  a: Peer,
  b: Peer,
): { median: number; min: number; max: number; rounds: number } | undefined {
  return roundRatios(row.rounds?.[a] ?? [], row.rounds?.[b] ?? []);
}

/** Measures every peer on every workload, one process at a time. */
export async function runPeers(o: PeersOptions): Promise<PeerRow[]> {
  const h = new PeerHarnesses(o.cacheDir);
  const t = String(o.threads);
  const threads = { OMP_NUM_THREADS: t, OPENBLAS_NUM_THREADS: t, HL_NUM_THREADS: t };
  const timingArgs = [
    String(o.timing.warmup),
    String(o.timing.repeat),
    String(o.timing.minRepeatMs),
  ];
  const log = o.log ?? (() => {});
  // Compile the harnesses up front, two at a time.
  const wanted = (p: Peer) => o.peers.includes(p);
  await Promise.all([
    wanted("naive") ? h.harness("naive") : undefined,
    wanted("onednn") ? h.harness("onednn") : undefined,
  ]);
  await Promise.all([
    wanted("openblas-avx512") || wanted("openblas-default") ? h.harness("openblas") : undefined,
    wanted("tunebook") ? h.harness("tunebook") : undefined,
  ]);
  const rows: PeerRow[] = [];
  for (const w of o.workloads) {
    const figures: PeerRow["figures"] = {};
    const perRound: NonNullable<PeerRow["rounds"]> = {};
    const problem = problemArgs(w);
    const rounds = o.rounds ?? 1;
    // Rounds interleave the peers, so a burst of load on the shared cores hits
    // one round of each rather than every round of one; each keeps its best.
    for (let round = 1; round <= rounds; round++) {
      for (const peer of o.peers) {
        log(`${w.name} ${w.shape.join(",")}: ${peer}${rounds > 1 ? ` (round ${round})` : ""}`);
        const f = await measurePeer(peer, w, h, o, threads, problem, timingArgs);
        (perRound[peer] ??= []).push("gflops" in f ? f.gflops : NaN);
        const kept = figures[peer];
        if (!kept || ("gflops" in f && (!("gflops" in kept) || f.gflops > kept.gflops))) {
          figures[peer] = f;
        }
      }
    }
    rows.push({ workload: w, figures, rounds: perRound });
  }
  return rows;
}

async function measurePeer(
  peer: Peer,
  w: Workload,
  h: PeerHarnesses,
  o: PeersOptions,
  threads: Record<string, string>,
  problem: string[] | undefined,
  timingArgs: string[],
): Promise<Figure> {
  // The library peers take the workload as a harness problem; tunebook runs its own kernel.
  if (!problem && peer !== "tunebook") return { na: `no harness problem for ${w.name}` };
  const args = [...problem ?? [], ...timingArgs];
  const timed = async (tool: Tool, a: string[], env: Record<string, string> = {}) =>
    "unavailable" in tool ? tool : await timeHarness(tool.path, a, w, { ...threads, ...env });
  switch (peer) {
    case "naive":
      return await timed(await h.harness("naive"), args);
    case "openblas-avx512": {
      if (w.name !== "matmul") return { na: "OpenBLAS has no convolution" };
      const missing = avx512Missing();
      if (missing) return { unavailable: missing };
      return await timed(await h.harness("openblas"), args, { OPENBLAS_CORETYPE: "SkylakeX" });
    }
    case "openblas-default": {
      if (w.name !== "matmul") return { na: "OpenBLAS has no convolution" };
      // The machine's own setting (inherited OPENBLAS_CORETYPE, or OpenBLAS's detection).
      return await timed(await h.harness("openblas"), args);
    }
    case "onednn":
      return await timed(await h.harness("onednn"), args);
    case "halide-adams2019":
    case "halide-mullapudi2016":
    case "halide-li2018": {
      if (problem?.[0] === "gconv") return { na: "the Halide pipeline has no grouped convolution" };
      const scheduler = {
        "halide-adams2019": "Adams2019",
        "halide-mullapudi2016": "Mullapudi2016",
        "halide-li2018": "Li2018",
      }[peer];
      return await timed(await h.halide(scheduler, w, o.threads), args);
    }
    case "tunebook":
      return await measureTunebook(w, h, o, threads, timingArgs);
  }
}

async function measureTunebook(
  w: Workload,
  h: PeerHarnesses,
  o: PeersOptions,
  threads: Record<string, string>,
  timingArgs: string[],
): Promise<Figure> {
  const tool = await h.harness("tunebook");
  if ("unavailable" in tool) return tool;
  const src = o.tunebook;
  const key = `${w.name}:${w.shape.join(",")}`;
  const candidates: { trace: Trace; note: string }[] = [];
  if (src.db) {
    const best = bestRecorded(src.db, w);
    if (best) {
      candidates.push({
        trace: best.trace,
        note: `best record of ${src.db} (${best.gflops.toFixed(1)} GFLOP/s when tuned)`,
      });
    }
  }
  for (const t of src.traces ?? []) {
    if (`${t.workload.name}:${t.workload.shape.join(",")}` === key) {
      candidates.push({ trace: t, note: "trace file" });
    }
  }
  if (candidates.length === 0 && (src.tune ?? 0) > 0) {
    const dir = await Deno.makeTempDir({ prefix: "tb-peers-tune-" });
    try {
      await runSession({
        db: join(dir, "t.db"),
        workload: { name: w.name, shape: w.shape },
        strategy: "random",
        trials: src.tune,
        cacheDir: src.cacheDir,
      });
      const best = bestRecorded(join(dir, "t.db"), w);
      if (best) {
        candidates.push({ trace: best.trace, note: `best of ${src.tune} random trials tuned now` });
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
  if (candidates.length === 0) return { none: "no record in --db or --trace (use --tune N)" };
  const builder = createBuilder({ cacheDir: src.cacheDir });
  const sizes = signatureOf(w).buffers.map((b) => String(b.size));
  let best: Figure | undefined;
  for (const c of candidates) {
    const s = kernelSource(c.trace);
    if (!("source" in s)) continue;
    const [b] = await builder.build([{ source: s.source }]);
    if (b.errorKind !== "none") continue;
    const f = await timeHarness(
      tool.path,
      [b.artifact!, ...sizes, "--", ...timingArgs],
      w,
      threads,
    );
    if ("gflops" in f && (!best || !("gflops" in best) || f.gflops > best.gflops)) {
      best = { ...f, note: c.note };
    } else best ??= f;
  }
  return best ?? { unavailable: "the recorded kernel did not build" };
}

function cell(f: Figure | undefined, base: Figure | undefined): string {
  if (!f) return "";
  if ("gflops" in f) {
    const ratio = base && "gflops" in base ? ` (${(f.gflops / base.gflops).toFixed(2)}x)` : "";
    return `${f.gflops.toFixed(1)}${ratio}`;
  }
  if ("na" in f) return "n/a";
  if ("none" in f) return "none";
  return "unavailable";
}

/** Label of a workload in the table. */
export function workloadLabel(w: Workload): string {
  if (w.name === "matmul") return `matmul ${w.shape[0]}x${w.shape[1]}x${w.shape[2]}`;
  if (w.name !== "conv2d" && w.name !== "conv2d_nchwc") return `${w.name} ${w.shape.join(",")}`;
  const [n, c, hh, ww, f, kh, kw, s, p, cb, fb] = w.shape;
  const blocks = w.name === "conv2d_nchwc" ? `, blocks ${cb}/${fb}` : "";
  return `conv2d ${n}x${c}x${hh}x${ww}, ${f} filters ${kh}x${kw}, stride ${s}, pad ${p}${blocks}`;
}

/** The markdown table (GFLOP/s, ratio to the reference peer) and notes on every non-figure. */
export function peersTable(rows: PeerRow[], peers: readonly Peer[]): string {
  const lines = [
    `| workload | ${peers.join(" | ")} |`,
    `| --- | ${peers.map(() => "---").join(" | ")} |`,
  ];
  const notes = new Set<string>();
  for (const r of rows) {
    const base = r.figures[referencePeer(r.workload, r.figures)];
    lines.push(
      `| ${workloadLabel(r.workload)} | ${
        peers.map((p) => cell(r.figures[p], base)).join(" | ")
      } |`,
    );
    for (const p of peers) {
      const f = r.figures[p];
      if (!f) continue;
      if ("unavailable" in f) notes.add(`${p}: unavailable: ${f.unavailable}`);
      if ("none" in f) notes.add(`${p}: none: ${f.none}`);
      if ("gflops" in f && f.note) notes.add(`${p} ${workloadLabel(r.workload)}: ${f.note}`);
    }
  }
  const paired = rows.flatMap((r) => {
    const ref = referencePeer(r.workload, r.figures);
    const p = pairedRatio(r, "tunebook", ref);
    return p && p.rounds > 1
      ? [
        `- tunebook / ${ref}, ${workloadLabel(r.workload)}, round by round: median ${
          p.median.toFixed(2)
        }x (${p.min.toFixed(2)}-${p.max.toFixed(2)}x over ${p.rounds} rounds)`,
      ]
      : [];
  });
  return [...lines, ...[...notes].map((n) => `- ${n}`), ...paired].join("\n");
}

const PEERS_USAGE = `usage: deno run -A bench/peers.ts [--sizes 256,512,1024]
  [--convs conv2,conv1 | N,C,H,W,F,KH,KW,stride,pad | NAME:SHAPE;...]
  [--threads 2] [--db runs.db] [--trace best.json] [--tune N] [--peers ${PEERS.join(",")}]
  [--warmup 1] [--repeat 5] [--min-repeat-ms 20] [--rounds 3] [--cache DIR]`;

/** The command line of `bench/peers.ts`, checked. */
export interface PeersArgs {
  workloads: Workload[];
  peers: Peer[];
  threads: number;
  rounds: number;
  timing: PeerTiming;
  db?: string;
  trace?: string;
  tune: number;
  cache: string;
}

/**
 * Parses and checks `bench/peers.ts`'s arguments with the commands' flag
 * helpers (`cli/args.ts`); a UsageError names the first bad one (the
 * command prints it on one line and exits with 2).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePeersArgs } from "./peers.ts";
 * import { UsageError } from "../cli/args.ts";
 * const a = parsePeersArgs(["--sizes", "none", "--convs", "1,8,8,8,8,3,3,1,1", "--peers", "onednn"]);
 * assert.equal(a.workloads.length, 1);
 * assert.throws(() => parsePeersArgs(["--rounds", "0"]), UsageError);
 * ```
 */
export function parsePeersArgs(args: string[]): PeersArgs {
  const v = parseFlags(args, {
    sizes: { type: "string", default: "256,512,1024" },
    convs: { type: "string", default: "conv2,conv1" },
    threads: { type: "string", default: "2" },
    db: { type: "string" },
    trace: { type: "string" },
    tune: { type: "string", default: "0" },
    peers: { type: "string", default: PEERS.join(",") },
    warmup: { type: "string", default: "1" },
    repeat: { type: "string", default: "5" },
    "min-repeat-ms": { type: "string", default: "20" },
    rounds: { type: "string", default: "3" },
    cache: { type: "string", default: DEFAULT_CACHE },
  }, PEERS_USAGE);
  // createWorkload checks every dimension; its message gets the flag in front.
  const workload = (flag: string, text: string, name: string, shape: number[]) => {
    try {
      return createWorkload(name, shape);
    } catch (e) {
      throw new UsageError(`--${flag} "${text}": ${(e as Error).message}`);
    }
  };
  const workloads: Workload[] = [];
  for (const s of v.sizes.split(",").filter((x) => x && x !== "none")) {
    workloads.push(workload("sizes", s, "matmul", [Number(s), Number(s), Number(s)]));
  }
  for (
    const c of v.convs.split(";").flatMap((x) => x.split(/,(?=[a-z])/)).filter((x) =>
      x && x !== "none"
    )
  ) {
    // NAME:D1,D2,... names another convolution workload (depthwise, grouped, blocked).
    const named = c.match(/^([a-z_0-9]+):(.*)$/);
    if (named && !CONV_WORKLOADS.includes(named[1])) {
      throw new UsageError(
        `--convs "${c}": ${named[1]} is not one of ${CONV_WORKLOADS.join(", ")}`,
      );
    }
    workloads.push(
      named
        ? workload("convs", c, named[1], named[2].split(",").map(Number))
        : workload("convs", c, "conv2d", NAMED_CONVS[c] ?? c.split(",").map(Number)),
    );
  }
  const peers = v.peers.split(",") as Peer[];
  for (const p of peers) {
    if (!(PEERS as readonly string[]).includes(p)) {
      throw new UsageError(`Unknown peer "${p}"; known: ${PEERS.join(", ")}`);
    }
  }
  return {
    workloads,
    peers,
    threads: positiveInt("threads", v.threads, 2),
    rounds: positiveInt("rounds", v.rounds, 3),
    timing: {
      warmup: nonNegativeInt("warmup", v.warmup, 1),
      repeat: positiveInt("repeat", v.repeat, 5),
      minRepeatMs: nonNegativeInt("min-repeat-ms", v["min-repeat-ms"], 20),
    },
    db: v.db,
    trace: v.trace,
    tune: nonNegativeInt("tune", v.tune, 0),
    cache: v.cache,
  };
}

/** The traces of a `--trace` file (one or a list); a UsageError names the file. */
async function readTraces(path: string): Promise<Trace[]> {
  try {
    const value = JSON.parse(await Deno.readTextFile(path));
    return (Array.isArray(value) ? value : [value]).map((t) => parseTrace(t));
  } catch (e) {
    throw new UsageError(`--trace ${path}: ${(e as Error).message}`);
  }
}

if (import.meta.main) {
  await runCommand("peers", async (argv) => {
    const a = parsePeersArgs(argv);
    // First use: install the peers if missing, saying what and why (TUNEBOOK_NO_SETUP=1: don't).
    await ensureSetupGroup("peers", "bench/peers.ts compares with OpenBLAS, oneDNN and Halide");
    const traces = a.trace ? await readTraces(a.trace) : undefined;
    const { workloads, peers, threads, rounds } = a;
    console.log(
      `peers: ${threads} threads, best of ${rounds} round(s) over the peers, each the median of ${a.timing.repeat} repeats (>= ${a.timing.minRepeatMs} ms each) after ${a.timing.warmup} warm-up call(s); OPENBLAS_CORETYPE of this process: ${
        Deno.env.get("OPENBLAS_CORETYPE") ?? "unset"
      }; load average ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`,
    );
    const rows = await runPeers({
      workloads,
      peers,
      threads,
      timing: a.timing,
      tunebook: { db: a.db, traces, tune: a.tune, cacheDir: join(a.cache, "kernels") },
      cacheDir: a.cache,
      rounds,
      log: (line) => console.error(`[peers] ${line}`),
    });
    console.log(peersTable(rows, peers));
    console.log(JSON.stringify({
      threads,
      results: rows.flatMap((r) =>
        peers.map((p) => ({
          workload: r.workload.name,
          shape: r.workload.shape,
          peer: p,
          ...r.figures[p],
        }))
      ),
    }));
  });
}
