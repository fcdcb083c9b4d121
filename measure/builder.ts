/**
 * The builder: compiles candidate kernels (with the timing harness appended)
 * into shared objects, at most `parallel` compilers at once, caching each
 * shared object under the SHA-256 of source + harness version + compiler
 * version + flags.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { compilerVersionLine, runCompiler } from "./compile.ts";
import { HARNESS_C, HARNESS_VERSION } from "./harness.ts";
import { Semaphore } from "./semaphore.ts";
import type { BuildInput, BuildResult } from "./types.ts";

/** Default compiler flags. */
export const DEFAULT_FLAGS: readonly string[] = [
  "-O3",
  "-march=native",
  "-fopenmp",
  "-fPIC",
  "-shared",
  "-std=gnu11",
];

/** Longest compiler message kept in {@link BuildResult.error}. */
export const MAX_ERROR_CHARS = 4000;

/** Options of {@link createBuilder}. */
export interface BuilderOptions {
  /** Where sources and shared objects go. Default `.cache/kernels` under `Deno.cwd()`. */
  cacheDir?: string;
  /** C compiler executable. Default `"gcc"`. */
  cc?: string;
  /** Compiler flags. Default {@link DEFAULT_FLAGS}. */
  flags?: string[];
  /** Most compiler processes at once. Default `navigator.hardwareConcurrency`. */
  parallel?: number;
  /** Wall seconds one compile may take before it is killed. Default 30. */
  timeoutSeconds?: number;
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
  const cc = options.cc ?? "gcc";
  const flags = [...(options.flags ?? DEFAULT_FLAGS)];
  const timeoutSeconds = options.timeoutSeconds ?? 30;
  const limit = new Semaphore(options.parallel ?? navigator.hardwareConcurrency ?? 1);
  const inFlight = new Map<string, Promise<BuildResult>>();
  let versionLine: Promise<string> | undefined;
  let description: Promise<string> | undefined;

  const version = () => {
    versionLine ??= compilerVersionLine(cc);
    versionLine.catch(() => {
      versionLine = undefined;
    });
    return versionLine;
  };

  async function compile(hash: string, source: string): Promise<BuildResult> {
    const artifact = join(cacheDir, `${hash}.so`);
    if (await exists(artifact)) {
      return { errorKind: "none", artifact, buildSeconds: 0, cached: true, hash };
    }
    const cPath = join(cacheDir, `${hash}.c`);
    await writeAtomic(cPath, `${source}\n${HARNESS_C}`);
    const tmp = `${artifact}.tmp-${crypto.randomUUID()}`;
    const outcome = await limit.use(() =>
      runCompiler(cc, [...flags, "-o", tmp, cPath], cacheDir, timeoutSeconds)
    );
    if (!outcome.success) {
      await removeQuietly(tmp);
      const seconds = outcome.seconds;
      if (outcome.timedOut) {
        const error = `${cc} killed after ${timeoutSeconds} s\n${truncateMessage(outcome.output)}`;
        return { errorKind: "build_timeout", error, buildSeconds: seconds, cached: false, hash };
      }
      const error = truncateMessage(outcome.output);
      return { errorKind: "compile_host", error, buildSeconds: seconds, cached: false, hash };
    }
    await Deno.rename(tmp, artifact);
    return { errorKind: "none", artifact, buildSeconds: outcome.seconds, cached: false, hash };
  }

  async function buildOne(source: string): Promise<BuildResult> {
    const key = [source, HARNESS_VERSION, await version(), cc, ...flags].join("\u0000");
    const hash = await sha256Hex(key);
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
      return await Promise.all(inputs.map(async (input, index) => {
        const result = await buildOne(input.source);
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
