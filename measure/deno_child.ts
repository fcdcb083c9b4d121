/**
 * The `deno run` command line of a measurement child process (the CPU
 * worker, the CUDA worker, the OpenCL build probe): quiet, no config file,
 * and the permissions a kernel-running child needs (read, FFI, environment;
 * write too when asked), then the script and its arguments.
 *
 * @example
 * ```ts
 * import { childDenoArgs } from "./deno_child.ts";
 * const args = childDenoArgs("cpu_worker.ts", ["{}"], { write: true });
 * if (args.at(-2) !== "cpu_worker.ts" || !args.includes("--allow-write")) throw new Error();
 * ```
 * @module
 */

/** `run`, the flags and permissions, `script`, then `args`. */
export function childDenoArgs(
  script: string,
  args: string[] = [],
  o: { write?: boolean } = {},
): string[] {
  return [
    "run",
    "--quiet",
    "--no-config",
    "--allow-read",
    ...(o.write ? ["--allow-write"] : []),
    "--allow-ffi",
    "--allow-env",
    script,
    ...args,
  ];
}
