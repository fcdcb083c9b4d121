/**
 * The builder: compiles candidate kernels (with the timing harness appended)
 * into shared objects, at most `parallel` compilers at once, caching each
 * shared object under the SHA-256 of source + harness version + compiler
 * version + flags.
 *
 * With `batch` > 1, the kernels of one `build` call that are not cached yet
 * are compiled together, up to `batch` per file and compiler process (a
 * unity build: each kernel's global names renamed `tb_kernel_<hash>`,
 * `tb_time_<hash>`, one copy of the timing loop), which saves the
 * compiler's start-up, the harness and the link per kernel. A batch that
 * fails to compile is compiled again one kernel at a time, so an error names
 * its kernel. A `build` of one kernel always gives its own shared object
 * with `tb_kernel` (what a reference kernel needs). The batches of one call
 * are as many as compilers may run at once (or more when `batch` demands),
 * their kernels dealt by what each will cost the compiler ({@link compileCost},
 * {@link balancedGroups}) so that the compilers finish together.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { type CompileOutcome, compilerVersionLine, runCompiler } from "./compile.ts";
import { GCC_FLAGS, kernelCompiler } from "../ir/target_cpu.ts";
import { HARNESS_C, HARNESS_VERSION, harnessFor } from "./harness.ts";
import { DEFAULT_CACHE_BYTES, sweepCache, TMP_FOLDER, touch } from "./kernel_cache.ts";
import { Semaphore } from "./semaphore.ts";
import { LOADED_WALL_FACTOR } from "./cpu_worker_process.ts";
import type { BuildInput, BuildResult } from "./types.ts";

/**
 * GCC's kernel flags ({@link GCC_FLAGS}, where their reasons are written):
 * what a builder given `cc` without `flags` compiles with.
 */
export const DEFAULT_FLAGS: readonly string[] = GCC_FLAGS;

/** Longest compiler message kept in {@link BuildResult.error}. */
export const MAX_ERROR_CHARS = 4000;

/** Options of {@link createBuilder}. */
export interface BuilderOptions {
  /** Where sources and shared objects go. Default `.cache/kernels` under `Deno.cwd()`. */
  cacheDir?: string;
  /**
   * C compiler executable. Default: {@link kernelCompiler}'s (gcc, or the
   * environment's `TUNEBOOK_CC`) when neither `cc` nor `flags` is given,
   * else `"gcc"`.
   */
  cc?: string;
  /** Compiler flags. Default: the chosen compiler's, else {@link DEFAULT_FLAGS}. */
  flags?: string[];
  /** Most compiler processes at once. Default `navigator.hardwareConcurrency`. */
  parallel?: number;
  /**
   * Wall seconds one compile may take before it is killed (per kernel of a
   * batch). Default 30. A compiler that got less than half of that on a CPU
   * (a loaded machine, a stopped process) goes on until it has, up to 4 times
   * the limit (`runCompiler`); killed starved, it is compiled once more at
   * once, and a second starved timeout is `build_timeout_transient`, which
   * `--resume` builds again.
   */
  timeoutSeconds?: number;
  /** Most kernels compiled together in one file (unity build). Default 1 (one file each). */
  batch?: number;
  /**
   * Compile at the lowest CPU priority (see `runCompiler` in compile.ts), so
   * that builds overlapping a measurement (`TuneOptions.overlap`) take only
   * idle cycles. Default false.
   */
  background?: boolean;
  /**
   * Cap of the cache's size in bytes: past it, the least recently used
   * kernels are evicted (see `kernel_cache.ts`), at the first build and each
   * time a tenth of the cap has been added. Default {@link DEFAULT_CACHE_BYTES}
   * (1 GiB); `Infinity` for none.
   */
  maxCacheBytes?: number;
}

/** Compiles kernels to shared objects. */
export interface Builder {
  /**
   * Builds every input (results in input order). `onDone` is called as each
   * one finishes. A compile error or timeout is a result, not an exception;
   * a missing compiler throws.
   */
  build(
    inputs: BuildInput[],
    onDone?: (index: number, r: BuildResult) => void,
  ): Promise<BuildResult[]>;
  /** Describes the compiler: its version line, flags and what `-march=native` means here. */
  describe(): Promise<string>;
}

/** Hex SHA-256 of `text`. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Cuts `text` to {@link MAX_ERROR_CHARS}, noting how much was dropped. */
export function truncateMessage(text: string, max = MAX_ERROR_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n... [${text.length - max} more characters truncated]`;
}

/** True when `path` exists (any other stat error is thrown). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** Removes `path`, ignoring a missing file. */
export async function removeQuietly(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch {
    // Nothing to clean up.
  }
}

/** Writes `text` to `path` through a temporary file and a rename. */
async function writeAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${crypto.randomUUID()}`;
  try {
    await Deno.writeTextFile(tmp, text);
    await Deno.rename(tmp, path);
  } catch (e) {
    await removeQuietly(tmp);
    throw e;
  }
}

async function resolvedMarch(cc: string, flags: readonly string[]): Promise<string> {
  if (!flags.includes("-march=native")) return "";
  try {
    const out = await new Deno.Command(cc, {
      args: ["-march=native", "-Q", "--help=target"],
      stdin: "null",
      stderr: "null",
    }).output();
    const match = new TextDecoder().decode(out.stdout).match(/^\s*-march=\s+(\S+)/m);
    return match ? match[1] : "";
  } catch {
    return "";
  }
}

/** Creates a {@link Builder}; see {@link BuilderOptions} for the defaults. */
export function createBuilder(options: BuilderOptions = {}): Builder {
  const cacheDir = resolve(options.cacheDir ?? join(Deno.cwd(), ".cache", "kernels"));
  const machine = options.cc || options.flags ? undefined : kernelCompiler();
  const cc = options.cc ?? machine?.cc ?? "gcc";
  const flags = [...(options.flags ?? machine?.flags ?? DEFAULT_FLAGS)];
  const timeoutSeconds = options.timeoutSeconds ?? 30;
  const parallelism = options.parallel ?? navigator.hardwareConcurrency ?? 1;
  const limit = new Semaphore(parallelism);
  const batch = Math.max(1, Math.floor(options.batch ?? 1));
  const background = options.background ?? false;
  const maxCacheBytes = options.maxCacheBytes ?? DEFAULT_CACHE_BYTES;
  const inFlight = new Map<string, Promise<BuildResult>>();
  /** Kernels built alone (a run's reference kernel, say): never evicted by this builder. */
  const alone = new Set<string>();
  /** Bytes written since the last sweep; a sweep is due at the first build. */
  let added = Infinity;
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweepIfDue = () => {
    if (!Number.isFinite(maxCacheBytes) || added < maxCacheBytes / 10) return sweeping;
    added = 0;
    // A starved compile may run LOADED_WALL_FACTOR times its limit: its files are not stale.
    const tmpAgeSeconds = Math.max(600, 2 * LOADED_WALL_FACTOR * timeoutSeconds * batch);
    sweeping = sweeping.then(() =>
      sweepCache(cacheDir, { maxBytes: maxCacheBytes, tmpAgeSeconds, keep: alone })
    );
    return sweeping;
  };
  const wrote = async (...paths: string[]) => {
    for (const path of paths) added += (await Deno.stat(path).catch(() => ({ size: 0 }))).size;
  };

  /**
   * Runs the compiler with a `TMPDIR` of its own inside the cache, removed
   * afterwards (a killed build's folder goes at a later sweep), so that
   * gcc's temporary files (`cc*.s`) never pile up in /tmp.
   */
  const compileIn = async (args: string[], seconds: number) => {
    const tmp = join(cacheDir, TMP_FOLDER, crypto.randomUUID());
    await Deno.mkdir(tmp, { recursive: true });
    try {
      return await limit.use(() =>
        runCompiler(cc, args, cacheDir, seconds, background, { TMPDIR: tmp })
      );
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  };
  let versionLine: Promise<string> | undefined;
  let description: Promise<string> | undefined;

  const version = () => {
    versionLine ??= compilerVersionLine(cc);
    versionLine.catch(() => {
      versionLine = undefined;
    });
    return versionLine;
  };

  /** The cached shared object of `hash` alone (its kernel is `tb_kernel`). */
  async function cachedAlone(hash: string): Promise<BuildResult | undefined> {
    const artifact = join(cacheDir, `${hash}.so`);
    if (!(await exists(artifact))) return undefined;
    await touch(artifact);
    return { errorKind: "none", artifact, buildSeconds: 0, cached: true, hash };
  }

  /** The cached build of `hash`: its own shared object, or its place in a batch's. */
  async function cached(hash: string): Promise<BuildResult | undefined> {
    const alone = await cachedAlone(hash);
    if (alone) return alone;
    try {
      const refPath = join(cacheDir, `${hash}.ref`);
      const ref = JSON.parse(await Deno.readTextFile(refPath));
      const shared = join(cacheDir, ref.artifact);
      if (await exists(shared)) {
        await Promise.all([touch(refPath), touch(shared)]);
        return {
          errorKind: "none",
          artifact: shared,
          symbol: ref.symbol,
          buildSeconds: 0,
          cached: true,
          hash,
        };
      }
    } catch {
      // Not built in a batch either.
    }
    return undefined;
  }

  async function compile(hash: string, source: string): Promise<BuildResult> {
    const hit = await cachedAlone(hash);
    if (hit) return hit;
    const artifact = join(cacheDir, `${hash}.so`);
    const cPath = join(cacheDir, `${hash}.c`);
    await writeAtomic(cPath, `${source}\n${HARNESS_C}`);
    let tmp = `${artifact}.tmp-${crypto.randomUUID()}`;
    let outcome = await compileIn([...flags, "-o", tmp, cPath], timeoutSeconds);
    let starvedBefore: CompileOutcome | undefined;
    if (outcome.starved) {
      // Starved of CPU by a loaded machine: that says nothing of the source; once more at once.
      await removeQuietly(tmp);
      starvedBefore = outcome;
      tmp = `${artifact}.tmp-${crypto.randomUUID()}`;
      outcome = await compileIn([...flags, "-o", tmp, cPath], timeoutSeconds);
    }
    if (!outcome.success) {
      await removeQuietly(tmp);
      const seconds = outcome.seconds + (starvedBefore?.seconds ?? 0);
      if (outcome.timedOut) {
        const error = `${timeoutMessage(cc, timeoutSeconds, outcome)}${
          starvedBefore
            ? ` (built twice; first: ${timeoutMessage(cc, timeoutSeconds, starvedBefore)})`
            : ""
        }\n${truncateMessage(outcome.output)}`;
        const errorKind = outcome.starved ? "build_timeout_transient" : "build_timeout";
        return { errorKind, error, buildSeconds: seconds, cached: false, hash };
      }
      const error = truncateMessage(outcome.output);
      return { errorKind: "compile_host", error, buildSeconds: seconds, cached: false, hash };
    }
    await Deno.rename(tmp, artifact);
    await wrote(cPath, artifact);
    const buildSeconds = outcome.seconds + (starvedBefore?.seconds ?? 0);
    return { errorKind: "none", artifact, buildSeconds, cached: false, hash };
  }

  async function hashOf(source: string): Promise<string> {
    return await sha256Hex([source, HARNESS_VERSION, await version(), cc, ...flags].join("\u0000"));
  }

  /** Compiles `members` (not cached) into one shared object; each alone if that fails. */
  async function compileBatch(members: { hash: string; source: string }[]): Promise<BuildResult[]> {
    if (members.length === 1) return [await compile(members[0].hash, members[0].source)];
    const batchHash = await sha256Hex(members.map((m) => m.hash).join(","));
    const name = `batch-${batchHash}.so`;
    const artifact = join(cacheDir, name);
    const symbols = members.map((m) => `tb_kernel_${m.hash.slice(0, 16)}`);
    const text = members.map((m, i) =>
      [
        `#define tb_kernel ${symbols[i]}`,
        `#define tb_release tb_release_${m.hash.slice(0, 16)}`,
        `#define tb_ws tb_ws_${m.hash.slice(0, 16)}`,
        `#define tb_layout tb_layout_${m.hash.slice(0, 16)}`,
        `#define tb_compute tb_compute_${m.hash.slice(0, 16)}`,
        m.source,
        harnessFor(symbols[i]),
        "#undef tb_kernel",
        "#undef tb_release",
        "#undef tb_ws",
        "#undef tb_layout",
        "#undef tb_compute",
        "#undef TB_LAYOUT_REWRITE",
      ].join("\n")
    ).join("\n");
    const cPath = join(cacheDir, `batch-${batchHash}.c`);
    await writeAtomic(cPath, text);
    const tmp = `${artifact}.tmp-${crypto.randomUUID()}`;
    const outcome = await compileIn([...flags, "-o", tmp, cPath], timeoutSeconds * members.length);
    if (!outcome.success) {
      await removeQuietly(tmp);
      return await Promise.all(members.map((m) => compile(m.hash, m.source)));
    }
    await Deno.rename(tmp, artifact);
    await wrote(cPath, artifact);
    const seconds = outcome.seconds / members.length;
    return await Promise.all(members.map(async (m, i) => {
      const ref = JSON.stringify({ artifact: name, symbol: symbols[i] });
      await writeAtomic(join(cacheDir, `${m.hash}.ref`), ref);
      return {
        errorKind: "none" as const,
        artifact,
        symbol: symbols[i],
        buildSeconds: seconds,
        cached: false,
        hash: m.hash,
      };
    }));
  }

  /** Builds `inputs` in batches of up to `batch`, as many batches as compilers run at once. */
  async function buildBatched(
    inputs: BuildInput[],
    onDone?: (index: number, r: BuildResult) => void,
  ): Promise<BuildResult[]> {
    const hashes = await Promise.all(inputs.map((i) => hashOf(i.source)));
    const results: BuildResult[] = new Array(inputs.length);
    const todo = new Map<string, number[]>();
    await Promise.all(hashes.map(async (hash, i) => {
      const hit = await cached(hash);
      if (hit) {
        results[i] = hit;
        onDone?.(i, hit);
      }
    }));
    hashes.forEach((hash, i) => {
      if (!results[i]) todo.set(hash, [...(todo.get(hash) ?? []), i]);
    });
    const members = [...todo.keys()].map((hash) => ({
      hash,
      source: inputs[todo.get(hash)![0]].source,
    }));
    const groups = Math.max(
      Math.ceil(members.length / batch),
      Math.min(parallelism, members.length),
    );
    const costs = new Map(members.map((m) => [m.hash, compileCost(m.source)]));
    const batches = balancedGroups(members, groups, batch, (m) => costs.get(m.hash)!);
    await Promise.all(batches.map(async (b) => {
      const built = await compileBatch(b);
      built.forEach((r, k) => {
        for (const i of todo.get(b[k].hash)!) {
          results[i] = { ...r };
          onDone?.(i, results[i]);
        }
      });
    }));
    return results;
  }

  async function buildOne(source: string): Promise<BuildResult> {
    const hash = await hashOf(source);
    let pending = inFlight.get(hash);
    if (!pending) {
      pending = compile(hash, source).finally(() => inFlight.delete(hash));
      inFlight.set(hash, pending);
    }
    return { ...(await pending) };
  }

  return {
    async build(inputs, onDone) {
      await version();
      await Deno.mkdir(cacheDir, { recursive: true });
      await sweepIfDue();
      // One kernel alone is always its own `tb_kernel` (a reference kernel, say).
      if (batch > 1 && inputs.length > 1) return await buildBatched(inputs, onDone);
      return await Promise.all(inputs.map(async (input, index) => {
        const result = await buildOne(input.source);
        if (inputs.length === 1 && result.artifact) alone.add(result.artifact);
        onDone?.(index, result);
        return result;
      }));
    },
    describe() {
      description ??= Promise.all([version(), resolvedMarch(cc, flags)]).then(([line, march]) =>
        `${line}; ${cc} ${flags.join(" ")}${march ? ` (-march=native = ${march})` : ""}`
      );
      description.catch(() => {
        description = undefined;
      });
      return description;
    },
  };
}

/**
 * Splits `items` into `groups` groups of at most `cap` items with totals of
 * `size` as even as it can (longest first, each into the group with the
 * least so far that has room), so that the compilers a unity build runs at
 * once finish together: gcc's time grows with the source's length. Each
 * group keeps its items in input order; empty groups are dropped.
 *
 * @example
 * ```ts
 * import { balancedGroups } from "./builder.ts";
 * const g = balancedGroups([9, 1, 1, 8, 1, 1], 2, 4, (x) => x);
 * if (JSON.stringify(g) !== "[[9,1,1],[1,8,1]]") throw new Error(JSON.stringify(g));
 * ```
 */
export function balancedGroups<T>(
  items: readonly T[],
  groups: number,
  cap: number,
  size: (item: T) => number,
): T[][] {
  const count = Math.max(1, Math.min(groups, items.length));
  const load = new Array<number>(count).fill(0);
  const of = new Array<number[]>(count).fill([]).map(() => [] as number[]);
  const order = items.map((_, i) => i).sort((a, b) => size(items[b]) - size(items[a]) || a - b);
  for (const i of order) {
    let best = -1;
    for (let g = 0; g < count; g++) {
      if (of[g].length < cap && (best < 0 || load[g] < load[best])) best = g;
    }
    if (best < 0) best = load.indexOf(Math.min(...load)); // no room anywhere: cap too small
    of[best].push(i);
    load[best] += size(items[i]);
  }
  return of.filter((g) => g.length > 0).map((g) => g.sort((a, b) => a - b).map((i) => items[i]));
}

/**
 * What compiling `source` costs gcc, in characters: its length, each line
 * counted as many times as the `GCC unroll` pragmas of the loops around it
 * unroll it (`_Pragma("GCC unroll N")` or `#pragma GCC unroll N` before a
 * `for` whose body is braced). A unity build's kernels are dealt to the
 * compilers by it. gcc's time grows with the code it has after unrolling,
 * not with the text: of 96 random matmul 256 kernels, a 2.9 KB one whose
 * loops unroll 128-fold took 1.3 s at -O3 and an 84 KB one written out 0.25
 * s; over them the time's correlation with the length was -0.02, with this
 * cost 0.82 (bench/results/tuning_throughput.md, "Dealt by unrolled size").
 *
 * @example
 * ```ts
 * import { compileCost } from "./builder.ts";
 * const body = "  s += a[i];";
 * const loop = (pragma: string) => `${pragma}\nfor (int i = 0; i < 8; ++i) {\n${body}\n}`;
 * const plain = compileCost(loop(""));
 * const unrolled = compileCost(loop('_Pragma("GCC unroll 8")'));
 * if (unrolled - plain !== 7 * body.length) throw new Error(`${plain} ${unrolled}`);
 * ```
 */
export function compileCost(source: string): number {
  const factors = [1];
  let pending = 1, total = 0;
  for (const line of source.split("\n")) {
    const pragma = /^\s*(?:_Pragma\("GCC unroll (\d+)"\)|#pragma GCC unroll (\d+))\s*$/.exec(line);
    if (pragma) {
      pending = Number(pragma[1] ?? pragma[2]);
      continue;
    }
    const loop = /^\s*for\s*\(/.test(line);
    let counted = false;
    for (const ch of line) {
      // A line counts at the factor of the block it starts in (a closing brace's: the outer one).
      if (!counted && ch !== " " && ch !== "}") {
        total += line.length * factors[factors.length - 1];
        counted = true;
      }
      if (ch === "}" && factors.length > 1) factors.pop();
      else if (ch === "{") factors.push(factors[factors.length - 1] * (loop ? pending : 1));
    }
    if (!counted) total += line.length * factors[factors.length - 1];
    // A pragma applies to the loop right after it only.
    if (line.trim() !== "") pending = 1;
  }
  return total;
}

/**
 * `gcc killed after 30 s`, with the CPU time the compiler got when known:
 * `(it ran 0.20 s on a CPU in 120.00 s: machine loaded)` when it was starved.
 */
function timeoutMessage(cc: string, timeoutSeconds: number, o: CompileOutcome): string {
  const cpu = o.cpuSeconds === undefined
    ? ""
    : ` (it ran ${o.cpuSeconds.toFixed(2)} s on a CPU in ${o.seconds.toFixed(2)} s${
      o.starved ? ": machine loaded" : ""
    })`;
  return `${cc} killed after ${timeoutSeconds} s${cpu}`;
}
