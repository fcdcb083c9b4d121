/**
 * What a run records about where it ran: CPU model, cores, OS, Deno and
 * tunebook versions (with the git commit when there is one).
 * @module
 */

/** Version of tunebook, from deno.json. */
export const TUNEBOOK_VERSION = "0.1.0";

/** A description of this machine, stored with every run. */
export function describeMachine(): Record<string, unknown> {
  return {
    cpu: cpuModel(),
    cores: navigator.hardwareConcurrency,
    os: `${Deno.build.os} ${Deno.osRelease()}`,
    arch: Deno.build.arch,
    deno: Deno.version.deno,
    ompNumThreads: Deno.env.get("OMP_NUM_THREADS") ?? null,
  };
}

/** tunebook's version with the git commit of the checkout, e.g. `0.1.0+3f2a1bc`. */
export async function tunebookVersion(): Promise<string> {
  try {
    const root = new URL("..", import.meta.url).pathname;
    const out = await new Deno.Command("git", {
      args: ["-C", root, "rev-parse", "--short", "HEAD"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const commit = new TextDecoder().decode(out.stdout).trim();
    return out.success && commit ? `${TUNEBOOK_VERSION}+${commit}` : TUNEBOOK_VERSION;
  } catch {
    return TUNEBOOK_VERSION;
  }
}

/**
 * The CPU's feature flags (`avx2`, `avx512f`, `fma`, ...), from the `flags`
 * line of /proc/cpuinfo, or from `lscpu` when /proc cannot be read; empty
 * when neither works. A peer built for one instruction set checks here
 * before it runs (OpenBLAS's AVX-512 kernels stop with SIGILL on a CPU
 * without `avx512f`).
 *
 * @example
 * ```ts
 * import { cpuFlags } from "./machine.ts";
 * const flags = cpuFlags();
 * if (flags.size > 0 && !flags.has("sse2")) throw new Error("every x86-64 CPU has sse2");
 * ```
 */
export function cpuFlags(): Set<string> {
  const words = (line: string | undefined) => new Set(line?.trim().split(/\s+/) ?? []);
  try {
    const info = Deno.readTextFileSync("/proc/cpuinfo");
    const line = info.match(/^flags\s*:\s*(.+)$/m)?.[1];
    if (line) return words(line);
  } catch {
    // Not readable here: ask lscpu.
  }
  try {
    const out = new Deno.Command("lscpu", {
      env: { LC_ALL: "C" },
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    const line = new TextDecoder().decode(out.stdout).match(/^Flags:\s*(.+)$/m)?.[1];
    if (out.success && line) return words(line);
  } catch {
    // No lscpu, or no permission to run it.
  }
  return new Set();
}

/**
 * The CPU model name: from /proc/cpuinfo, or from `lscpu` when reading
 * /proc needs permissions the process lacks (Deno 2.9 asks for
 * `--allow-all` to read /proc/cpuinfo); "unknown" when neither works.
 */
export function cpuModel(): string {
  try {
    const info = Deno.readTextFileSync("/proc/cpuinfo");
    const m = info.match(/^model name\s*:\s*(.+)$/m)?.[1]?.trim();
    if (m) return m;
  } catch {
    // Not readable here: ask lscpu.
  }
  try {
    const out = new Deno.Command("lscpu", {
      env: { LC_ALL: "C" },
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    const m = new TextDecoder().decode(out.stdout).match(/^Model name:\s*(.+)$/m)?.[1]?.trim();
    if (out.success && m) return m;
  } catch {
    // No lscpu, or no permission to run it.
  }
  return "unknown";
}
