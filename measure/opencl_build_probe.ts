/**
 * Builds one OpenCL source in a process of its own, so that a crash of the
 * platform's compiler (PoCL runs LLVM inside the process that calls
 * `clBuildProgram`; an LLVM assertion aborts it) kills this process and not
 * the tuner or the test that asked:
 *
 * ```sh
 * deno run --allow-read --allow-ffi --allow-env measure/opencl_build_probe.ts FILE.cl OPTIONS [PLATFORM]
 * ```
 *
 * Exit status 0: built; 3: the compiler refused the source (its log on
 * stderr); anything else, or a signal: the compiler crashed.
 * {@link probeOpenCLBuild} runs it; `OpenCLRuntime.build` does first.
 * @module
 */
import { fileURLToPath } from "node:url";
import { childDenoArgs } from "./deno_child.ts";
import { OpenCLRuntime } from "./opencl_runner.ts";

/** This script's path: the default build probe of `OpenCLRuntime.open`. */
export const OPENCL_BUILD_PROBE: string = fileURLToPath(import.meta.url);

/**
 * Builds `source` with `options` on the platform named like `platform` in a
 * child process running `probe` (this script): undefined when the compiler returned (built or refused),
 * else one line saying how it crashed (signal or status, and the last line
 * it printed).
 *
 * @example
 * ```ts ignore
 * import { probeOpenCLBuild } from "./opencl_build_probe.ts";
 * const crash = probeOpenCLBuild("__kernel void k(__global float *x) { x[0] = 1; }", "");
 * if (crash) console.error(crash);
 * ```
 */
export function probeOpenCLBuild(
  source: string,
  options: string,
  platform = "",
  probe = OPENCL_BUILD_PROBE,
): string | undefined {
  const file = Deno.makeTempFileSync({ prefix: "tb-opencl-", suffix: ".cl" });
  try {
    Deno.writeTextFileSync(file, source);
    const out = new Deno.Command(Deno.execPath(), {
      args: childDenoArgs(probe, [file, options, platform]),
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    if (out.success || out.code === 3) return undefined;
    const last = new TextDecoder().decode(out.stderr).trim().split("\n").filter((l) => l.trim())
      .at(-1)?.trim().slice(0, 300);
    const how = out.signal ? `killed by ${out.signal}` : `exited with status ${out.code}`;
    return `the OpenCL compiler crashed (${how})${last ? `: ${last}` : ""}`;
  } finally {
    Deno.removeSync(file);
  }
}

if (import.meta.main) {
  const [file, options = "", platform = ""] = Deno.args;
  const rt = OpenCLRuntime.open(platform ? { platform } : {});
  try {
    rt.release(rt.build(Deno.readTextFileSync(file), options, { isolate: false }));
  } catch (e) {
    console.error((e as Error).message);
    Deno.exit(3);
  } finally {
    rt.close();
  }
}
