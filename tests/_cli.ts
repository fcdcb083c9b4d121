/**
 * Runs a tunebook script as the CLI tests need it: a `deno run -A` child
 * with the repository's deno.json, in a given folder, output captured.
 * @module
 */
import { join } from "node:path";
import { ROOT, scriptArgs } from "../cli/script.ts";

export { ROOT };

/** Environment sharing one kernel cache across tests, so repeated tests don't rebuild kernels. */
export const SHARED_KERNEL_CACHE: Record<string, string> = {
  TUNEBOOK_CACHE: join(ROOT, ".cache/kernels"),
};

/** What a script run gave. */
export interface ScriptResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `script` (a path relative to the repository root, e.g.
 * `cli/compare.ts`) with `args` in `cwd`; `env` is added to this process's
 * environment.
 */
export async function runScript(
  script: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<ScriptResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: scriptArgs(script, args),
    cwd,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
