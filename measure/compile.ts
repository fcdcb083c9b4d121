/**
 * Runs one compiler process with a wall-clock limit.
 *
 * The compiler is started in its own process group (`detached`) so that a
 * timeout kills the driver and every child it spawned (`cc1`, `as`, `ld`).
 *
 * Its limit counts CPU time when the machine is loaded, as the runner's
 * does (`worker_process.ts`): a compiler past its limit that has used less
 * than `LOADED_CPU_SHARE` (half) of it on a CPU (the driver and its
 * children together, from `/proc`) goes on until it has, or until
 * `LOADED_WALL_FACTOR` (4) times the limit; killed then, it was `starved`,
 * and the builder tries it once more and else records a transient
 * `build_timeout_transient`.
 *
 * @module
 */
import { howItEnded } from "./subprocess.ts";
import { readProcFile } from "./_proc.ts";
import { LOADED_CPU_SHARE, LOADED_WALL_FACTOR } from "./cpu_worker_process.ts";

/** Outcome of {@link runCompiler}. */
export interface CompileOutcome {
  /** True when the process exited with status 0 within the time limit. */
  success: boolean;
  /** True when the time limit was hit and the process group was killed. */
  timedOut: boolean;
  /** Everything the compiler wrote to stdout and stderr. */
  output: string;
  /** Wall seconds the process ran. */
  seconds: number;
  /**
   * CPU seconds the compiler and its children had used when it was killed
   * ({@link processTreeCpuSeconds}); undefined when it was not, or `/proc`
   * could not be read.
   */
  cpuSeconds?: number;
  /**
   * True when it was killed having used less than `LOADED_CPU_SHARE` of its
   * limit in CPU time: the machine, not the source, made it slow.
   */
  starved?: boolean;
}

/**
 * CPU seconds (user + system) used so far by process `pid` and every
 * process below it: each live one's own time plus that of its children it
 * has reaped, walking `/proc/PID/task/PID/children`. Undefined when `pid`'s
 * `/proc/PID/stat` cannot be read (no FFI permission, not Linux, gone).
 *
 * @example
 * ```ts ignore
 * const seconds = processTreeCpuSeconds(child.pid);
 * ```
 */
export function processTreeCpuSeconds(pid: number, depth = 0): number | undefined {
  const stat = readProcFile(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // Fields after the command name (which may hold spaces) start at field 3.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ").map(Number);
  let ticks = f[11] + f[12] + f[13] + f[14]; // utime, stime, cutime, cstime: fields 14-17
  if (!Number.isFinite(ticks)) return undefined;
  if (depth < 8) {
    const children = readProcFile(`/proc/${pid}/task/${pid}/children`) ?? "";
    for (const child of children.split(/\s+/).filter(Boolean)) {
      ticks += 100 * (processTreeCpuSeconds(Number(child), depth + 1) ?? 0);
    }
  }
  return ticks / 100;
}

/** Message of the error thrown when the compiler executable does not exist. */
export function missingCompilerMessage(cc: string): string {
  return `C compiler "${cc}" not found; run the setup script: bash scripts/setup.sh`;
}

/**
 * Runs `cc args...` in `cwd`, killing its process group after
 * `timeoutSeconds`, with `env` added to its environment (the builder sets
 * `TMPDIR` there). Throws a clear Error when `cc` is not installed.
 *
 * With `background`, the compiler runs at the lowest CPU priority, so that
 * it takes only the cycles a kernel measured on the same cores leaves idle:
 * under `nice -n 19`, and with the Linux autogroup of its session set to
 * nice 19 (by a `sh` that then becomes the compiler). The compiler runs in a
 * session of its own (`detached`, so that a timeout can kill its whole
 * process group), and with autogroups enabled
 * (Debian's default) the scheduler shares each core fairly between sessions,
 * whatever the nice value or policy of the tasks inside them. A compiler
 * overlapping a measurement then takes half of a measured core: random-search
 * kernels of matmul 256 measured a median 5x slower, some 100x.
 */
export async function runCompiler(
  cc: string,
  args: string[],
  cwd: string,
  timeoutSeconds: number,
  background = false,
  env: Record<string, string> = {},
): Promise<CompileOutcome> {
  const start = performance.now();
  let child: Deno.ChildProcess;
  try {
    // In the background: a shell lowers its session's autogroup (it is the
    // session's first process), then becomes the compiler under nice 19.
    child = new Deno.Command(background ? "sh" : cc, {
      args: background ? ["-c", BACKGROUND_SCRIPT, cc, ...args] : args,
      cwd,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new Error(missingCompilerMessage(cc));
    throw e;
  }
  let timedOut = false, starved = false, cpuSeconds: number | undefined;
  const check = () => {
    const wall = (performance.now() - start) / 1000;
    const cpu = processTreeCpuSeconds(child.pid);
    const short = cpu !== undefined && cpu < LOADED_CPU_SHARE * timeoutSeconds;
    if (short && wall < LOADED_WALL_FACTOR * timeoutSeconds) {
      // Starved by a loaded machine: wait for the CPU time the limit stands for.
      timer = setTimeout(check, Math.min(1000, timeoutSeconds * 250));
      return;
    }
    [timedOut, starved, cpuSeconds] = [true, short, cpu];
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  let timer = setTimeout(check, timeoutSeconds * 1000);
  let result: Deno.CommandOutput;
  try {
    result = await child.output();
  } finally {
    clearTimeout(timer);
  }
  const decoder = new TextDecoder();
  let output = decoder.decode(result.stdout) + decoder.decode(result.stderr);
  if (!result.success && !timedOut && output.trim() === "") {
    // A compiler that says nothing still says how it ended.
    output = howItEnded(cc, result);
  }
  // The shell runs the compiler itself: 127 is its "command not found".
  if (background && result.code === 127 && !timedOut) throw new Error(missingCompilerMessage(cc));
  return {
    success: result.success && !timedOut,
    timedOut,
    output,
    seconds: (performance.now() - start) / 1000,
    ...(timedOut && cpuSeconds !== undefined ? { cpuSeconds } : {}),
    ...(timedOut ? { starved } : {}),
  };
}

/**
 * `sh -c` script of a background compile (`$0` the compiler, `$@` its
 * arguments): the autogroup of its session at nice 19 (nothing to set without
 * autogroups), then the compiler under `nice -n 19`. Writing
 * /proc/self/autogroup from the shell needs no file permission of Deno's.
 */
const BACKGROUND_SCRIPT = 'echo 19 > /proc/self/autogroup 2>/dev/null; exec nice -n 19 "$0" "$@"';

/** First line of `cc --version`; throws a clear Error when `cc` is missing. */
export async function compilerVersionLine(cc: string): Promise<string> {
  let result: Deno.CommandOutput;
  try {
    result = await new Deno.Command(cc, { args: ["--version"], stdin: "null" }).output();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new Error(missingCompilerMessage(cc));
    throw e;
  }
  const text = new TextDecoder().decode(result.stdout).trim();
  if (!result.success || text === "") {
    throw new Error(`"${cc} --version" failed; run the setup script: bash scripts/setup.sh`);
  }
  return text.split("\n")[0].trim();
}
