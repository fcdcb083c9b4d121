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
