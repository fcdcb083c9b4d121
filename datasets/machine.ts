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
 * The CPU model name: from /proc/cpuinfo, or from `lscpu` when reading
 * /proc needs permissions the process lacks (Deno 2.9 asks for
 * `--allow-all` to read /proc/cpuinfo); "unknown" when neither works.
 * `cpuInfo` in ir/target_cpu.ts reads the flags the same way; the layer order
 * keeps measure/ and datasets/ from importing each other
 * (tests/layers_test.ts), so each has its own.
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
