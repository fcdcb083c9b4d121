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

/**
 * Writes `two.json` in `dir`: a network of two 3x3 convolutions with a ReLU
 * between, over an 8-channel 8x8 input, small enough for the network benches'
 * tests to tune in seconds.
 */
export async function writeTwoConvs(dir: string): Promise<void> {
  await Deno.writeTextFile(
    join(dir, "two.json"),
    JSON.stringify({
      name: "two",
      input: { name: "x", shape: [1, 8, 8, 8] },
      layers: [
        { name: "c1", op: "conv2d", inputs: ["x"], channels: 8, kernel: 3, pad: 1 },
        { name: "r1", op: "relu", inputs: ["c1"] },
        { name: "c2", op: "conv2d", inputs: ["r1"], channels: 8, kernel: 3, pad: 1 },
      ],
    }),
  );
}

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
