/**
 * What a run records about where it ran: CPU model, cores, OS, Deno and
 * tunebook versions (with the git commit when there is one).
 * @module
 */
import { cpuInfo } from "../ir/target_cpu.ts";

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
 * The CPU model name: from /proc/cpuinfo, or from `lscpu` when reading
 * /proc needs permissions the process lacks (Deno 2.9 asks for
 * `--allow-all` to read /proc/cpuinfo); "unknown" when neither works.
 * It is `cpuInfo` of ir/target_cpu.ts, which reads the CPU flags the same way.
 */
export function cpuModel(): string {
  return cpuInfo("model name", "Model name") ?? "unknown";
}
