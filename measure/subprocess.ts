/**
 * Waiting for a child process with a deadline: the one timeout the compiler,
 * the CUDA worker and the peer harnesses share.
 *
 * @module
 */

/**
 * The output of `child`, killing it (by default `SIGKILL`; `kill` may kill
 * its process group instead) if it runs longer than `timeoutSeconds`.
 * `timedOut` says whether it was killed by the deadline.
 */
export async function outputWithin(
  child: Deno.ChildProcess,
  timeoutSeconds: number,
  kill: () => void = () => child.kill("SIGKILL"),
): Promise<{ output: Deno.CommandOutput; timedOut: boolean }> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      kill();
    } catch {
      // Already gone.
    }
  }, timeoutSeconds * 1000);
  try {
    const output = await child.output();
    return { output, timedOut };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How a child that failed ended, in words: `gcc stopped by SIGABRT`, or
 * `gcc exited with status 1`; for messages where the child itself said
 * nothing.
 *
 * @example
 * ```ts
 * import { howItEnded } from "./subprocess.ts";
 * const out = new Deno.Command("sh", { args: ["-c", "exit 3"] }).outputSync();
 * if (howItEnded("sh", out) !== "sh exited with status 3") throw new Error();
 * ```
 */
export function howItEnded(
  cmd: string,
  output: Pick<Deno.CommandOutput, "code" | "signal">,
): string {
  return output.signal
    ? `${cmd} stopped by ${output.signal}`
    : `${cmd} exited with status ${output.code}`;
}
