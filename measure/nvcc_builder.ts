/**
 * The CUDA builder: compiles CUDA sources (from `ir/codegen_cuda.ts`) into
 * shared objects with nvcc, at most `parallel` at once, cached under the
 * SHA-256 of source + nvcc version + flags, and parses what
 * `--ptxas-options=-v` prints into per-kernel {@link KernelResources}
 * (registers, shared memory, spills), which come back with every result,
 * cached ones included. Compile errors (host or device) are results with
 * errorKind `"compile_host"`; a compile past the time limit is `"build_timeout"`.
 *
 * @example
 * ```ts
 * import { parsePtxas } from "./nvcc_builder.ts";
 * const r = parsePtxas(
 *   "ptxas info    : Compiling entry function 'tb_k0' for 'sm_90'\n" +
 *     "ptxas info    : Function properties for tb_k0\n" +
 *     "    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n" +
 *     "ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem\n",
 * );
 * if (r[0].registers !== 40 || r[0].sharedBytes !== 2048 || r[0].spillStores !== 8) {
 *   throw new Error();
 * }
 * ```
 * @module
 */
import { join, resolve } from "node:path";
import { runCompiler } from "./compile.ts";
import { exists, removeQuietly, sha256Hex, truncateMessage } from "./builder.ts";
import { Semaphore } from "./semaphore.ts";
import type { BuildInput, BuildResult } from "./types.ts";

/** What ptxas reports for one kernel. */
export interface KernelResources {
  /** Kernel (entry function) name. */
  kernel: string;
  /** 32-bit registers per thread. */
  registers: number;
  /** Static shared memory per block, bytes. */
  sharedBytes: number;
  /** Bytes of register spill stores per thread. */
  spillStores: number;
  /** Bytes of register spill loads per thread. */
  spillLoads: number;
  /** Stack frame per thread, bytes (local arrays that did not fit in registers). */
  stackBytes: number;
}

/** A {@link BuildResult} with the ptxas figures of every kernel of the program. */
export interface NvccBuildResult extends BuildResult {
  /** Per-kernel resources (empty when the build failed). */
  resources: KernelResources[];
}

/** Default nvcc flags, before `-arch`. */
export const NVCC_FLAGS: readonly string[] = [
  "-O3",
  "-shared",
  "-Xcompiler",
  "-fPIC",
  "--ptxas-options=-v",
];

/** Options of {@link createNvccBuilder}. */
export interface NvccBuilderOptions {
  /** Where sources and shared objects go. Default `.cache/cuda` under `Deno.cwd()`. */
  cacheDir?: string;
  /** nvcc executable. Default `$NVCC`, else `"nvcc"`. */
  nvcc?: string;
  /** GPU architecture (`-arch`). Default `"sm_90"`. */
  arch?: string;
  /** Flags before `-arch`. Default {@link NVCC_FLAGS}. */
  flags?: string[];
  /** Most nvcc processes at once. Default `navigator.hardwareConcurrency`. */
  parallel?: number;
  /** Wall seconds one compile may take. Default 120. */
  timeoutSeconds?: number;
  /** Called as each build finishes (after the cache lookup). */
  onBuilt?: (index: number, r: NvccBuildResult) => void;
}

/** Compiles CUDA programs to shared objects; see the module documentation. */
export interface NvccBuilder {
  /** Builds every input (results in input order); failures are results, a missing nvcc throws. */
  build(
    inputs: BuildInput[],
    onDone?: (index: number, r: NvccBuildResult) => void,
  ): Promise<NvccBuildResult[]>;
  /** nvcc's release line and the flags. */
  describe(): Promise<string>;
}

/** Parses `ptxas -v` output (as nvcc prints it) into per-kernel resources, in order. */
export function parsePtxas(text: string): KernelResources[] {
  const out: KernelResources[] = [];
  const byName = new Map<string, KernelResources>();
  const get = (name: string) => {
    let r = byName.get(name);
    if (!r) {
      r = {
        kernel: name,
        registers: 0,
        sharedBytes: 0,
        spillStores: 0,
        spillLoads: 0,
        stackBytes: 0,
      };
      byName.set(name, r);
      out.push(r);
    }
    return r;
  };
  let entry: string | undefined, props: string | undefined;
  for (const line of text.split("\n")) {
    let m = line.match(/Compiling entry function '([^']+)'/);
    if (m) {
      entry = m[1];
      get(entry);
      continue;
    }
    m = line.match(/Function properties for (\S+)/);
    if (m) {
      props = m[1];
      continue;
    }
    m = line.match(/(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads/);
    if (m && props && byName.has(props)) {
      const r = byName.get(props)!;
      r.stackBytes = Number(m[1]);
      r.spillStores = Number(m[2]);
      r.spillLoads = Number(m[3]);
      continue;
    }
    m = line.match(/Used (\d+) registers/);
    if (m && entry) {
      const r = get(entry);
      r.registers = Number(m[1]);
      const smem = line.match(/(\d+) bytes smem/);
      if (smem) r.sharedBytes = Number(smem[1]);
    }
  }
  return out;
}

/** One line describing resources, e.g. `tb_k0 40 regs, 2048 B smem, spills 0/0 B`. */
export function formatResources(rs: KernelResources[]): string {
  return rs.map((r) =>
    `${r.kernel} ${r.registers} regs, ${r.sharedBytes} B smem, spills ${r.spillStores}/${r.spillLoads} B`
  ).join("; ");
}

/** nvcc's `release` line, e.g. `Cuda compilation tools, release 13.0, V13.0.88`. */
export async function nvccVersion(nvcc: string): Promise<string> {
  let result: Deno.CommandOutput;
  try {
    result = await new Deno.Command(nvcc, { args: ["--version"], stdin: "null" }).output();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error(
        `nvcc "${nvcc}" not found: install the CUDA toolkit or set NVCC to its path`,
      );
    }
    throw e;
  }
  const text = new TextDecoder().decode(result.stdout);
  const line = text.split("\n").find((l) => /release/.test(l));
  if (!result.success || !line) throw new Error(`"${nvcc} --version" failed`);
  return line.trim();
}

/** Creates an {@link NvccBuilder}; see {@link NvccBuilderOptions} for the defaults. */
export function createNvccBuilder(options: NvccBuilderOptions = {}): NvccBuilder {
  const cacheDir = resolve(options.cacheDir ?? join(Deno.cwd(), ".cache", "cuda"));
  const nvcc = options.nvcc ?? Deno.env.get("NVCC") ?? "nvcc";
  const flags = [...(options.flags ?? NVCC_FLAGS), `-arch=${options.arch ?? "sm_90"}`];
  const timeoutSeconds = options.timeoutSeconds ?? 120;
  const limit = new Semaphore(options.parallel ?? navigator.hardwareConcurrency ?? 1);
  const inFlight = new Map<string, Promise<NvccBuildResult>>();
  let version: Promise<string> | undefined;
  const versionLine = () => {
    version ??= nvccVersion(nvcc);
    version.catch(() => {
      version = undefined;
    });
    return version;
  };

  async function compile(hash: string, source: string): Promise<NvccBuildResult> {
    const artifact = join(cacheDir, `${hash}.so`);
    const resPath = join(cacheDir, `${hash}.ptxas.json`);
    if (await exists(artifact) && await exists(resPath)) {
      const resources = JSON.parse(await Deno.readTextFile(resPath)) as KernelResources[];
      return { errorKind: "none", artifact, buildSeconds: 0, cached: true, hash, resources };
    }
    const cuPath = join(cacheDir, `${hash}.cu`);
    await Deno.writeTextFile(cuPath, source);
    const tmp = `${artifact}.tmp-${crypto.randomUUID()}.so`;
    const outcome = await limit.use(() =>
      runCompiler(nvcc, [...flags, "-o", tmp, cuPath], cacheDir, timeoutSeconds)
    );
    const base = { buildSeconds: outcome.seconds, cached: false, hash, resources: [] };
    if (!outcome.success) {
      await removeQuietly(tmp);
      if (outcome.timedOut) {
        const error = `${nvcc} killed after ${timeoutSeconds} s\n${
          truncateMessage(outcome.output)
        }`;
        return { errorKind: "build_timeout", error, ...base };
      }
      return { errorKind: "compile_host", error: truncateMessage(outcome.output), ...base };
    }
    const resources = parsePtxas(outcome.output);
    await Deno.writeTextFile(resPath, JSON.stringify(resources));
    await Deno.rename(tmp, artifact);
    return { errorKind: "none", artifact, ...base, resources };
  }

  async function buildOne(source: string): Promise<NvccBuildResult> {
    const hash = await sha256Hex([source, await versionLine(), nvcc, ...flags].join("\u0000"));
    let pending = inFlight.get(hash);
    if (!pending) {
      pending = compile(hash, source).finally(() => inFlight.delete(hash));
      inFlight.set(hash, pending);
    }
    const r = await pending;
    return { ...r, resources: r.resources.map((x) => ({ ...x })) };
  }

  return {
    async build(inputs, onDone) {
      await versionLine();
      await Deno.mkdir(cacheDir, { recursive: true });
      return await Promise.all(inputs.map(async (input, index) => {
        const result = await buildOne(input.source);
        options.onBuilt?.(index, result);
        onDone?.(index, result);
        return result;
      }));
    },
    async describe() {
      return `${await versionLine()}; ${nvcc} ${flags.join(" ")}`;
    },
  };
}
