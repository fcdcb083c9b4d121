/**
 * How tunebook runs one of its own scripts as a child process: `deno run -A`
 * with the repository's deno.json, whatever the working folder. Tests, the
 * distributed benchmark and the CLI tests spawn commands and workers this way.
 *
 * @example
 * ```ts
 * import { scriptArgs } from "./script.ts";
 * const args = scriptArgs("cli/queue_worker.ts", ["--queue", "redis://127.0.0.1:6379"]);
 * if (args[0] !== "run" || !args.includes("--config")) throw new Error();
 * ```
 * @module
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT: string = fileURLToPath(new URL("..", import.meta.url));

/**
 * Arguments of `Deno.execPath()` that run `script` (relative to the
 * repository root, or absolute) with `args`.
 */
export function scriptArgs(script: string, args: string[] = []): string[] {
  return [
    "run",
    "-A",
    "--quiet",
    "--config",
    join(ROOT, "deno.json"),
    resolve(ROOT, script),
    ...args,
  ];
}
