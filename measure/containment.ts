/**
 * Containment of a measurement worker, applied by the worker to itself (Linux,
 * through libc by FFI) once Deno has started, so that Deno keeps working:
 *
 * - {@link dieWithParent}: `prctl(PR_SET_PDEATHSIG, SIGKILL)`, so a worker
 *   (and the kernel spinning in it) dies when the tuner dies, even mid-kernel.
 * - {@link limitAddressSpace}: `RLIMIT_AS` at what the worker has mapped at
 *   start plus an allowance: a kernel's oversized `malloc` fails instead of
 *   taking the machine's memory.
 * - {@link limitCpuTime}: a soft `RLIMIT_CPU` reset before every request to
 *   the CPU seconds used so far plus a budget: a kernel that outspins it gets
 *   SIGXCPU (the runner records `run_timeout`).
 * - {@link forbidNewProcesses}: a seccomp filter that fails `fork`, `vfork`
 *   and `clone` without `CLONE_THREAD` with EPERM (threads, OpenMP's
 *   included, still start), so no kernel leaves a child behind.
 *   `RLIMIT_NPROC` would not do: it does not bind root.
 *
 * @module
 */

import { readProcFile } from "./_proc.ts";

const LIBC = {
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  setrlimit: { parameters: ["i32", "buffer"], result: "i32" },
  getrusage: { parameters: ["i32", "buffer"], result: "i32" },
  syscall: { parameters: ["i64", "i64", "i64", "buffer"], result: "i64" },
} as const;

let libc: Deno.DynamicLibrary<typeof LIBC> | undefined;

function lib(): Deno.DynamicLibrary<typeof LIBC> {
  libc ??= Deno.dlopen("libc.so.6", LIBC);
  return libc;
}

const PR_SET_PDEATHSIG = 1;
const PR_SET_NO_NEW_PRIVS = 38;
const SIGKILL = 9;
const RLIMIT_CPU = 0;
const RLIMIT_AS = 9;
const RLIM_INFINITY = 0xffff_ffff_ffff_ffffn;

/** What a worker limits itself to; see the module documentation. */
export interface WorkerLimits {
  /** Pid of the process that started the worker: the worker dies with it. */
  parentPid?: number;
  /** Bytes of address space the worker may map beyond what it has at start. */
  memoryBytes?: number;
  /** CPU seconds (all threads together) one request may use. */
  cpuSecondsPerRequest?: number;
  /** Forbid new processes (seccomp). */
  noFork?: boolean;
}

function setLimit(resource: number, soft: bigint, hard: bigint): void {
  const rlim = new BigUint64Array([soft, hard]);
  if (lib().symbols.setrlimit(resource, rlim) !== 0) {
    throw new Error(`setrlimit(${resource}) failed`);
  }
}

/**
 * Asks the kernel to SIGKILL this process when `parentPid` (its parent) dies;
 * exits at once when the parent is already gone.
 *
 * @example
 * ```ts ignore
 * dieWithParent(Number(Deno.args[0]));
 * ```
 */
export function dieWithParent(parentPid: number): void {
  lib().symbols.prctl(PR_SET_PDEATHSIG, BigInt(SIGKILL), 0n, 0n, 0n);
  // The parent died before the request above took effect: we are an orphan.
  if (Deno.ppid !== parentPid) Deno.exit(0);
}

/** Bytes of address space this process maps now (`VmSize`). */
export function mappedBytes(): number {
  const status = readProcFile("/proc/self/status") ?? "";
  const kb = Number(status.match(/^VmSize:\s+(\d+) kB/m)?.[1]);
  if (!Number.isFinite(kb)) throw new Error("no VmSize in /proc/self/status");
  return kb * 1024;
}

/**
 * Limits the address space to what is mapped now plus `bytes` (soft and hard
 * `RLIMIT_AS`). Returns the limit set.
 *
 * @example
 * ```ts ignore
 * limitAddressSpace(4 * 2 ** 30); // 4 GiB more than the worker maps at start
 * ```
 */
export function limitAddressSpace(bytes: number): number {
  const limit = mappedBytes() + Math.floor(bytes);
  setLimit(RLIMIT_AS, BigInt(limit), BigInt(limit));
  return limit;
}

/** CPU seconds (user + system, all threads) this process has used. */
export function cpuSecondsUsed(): number {
  // struct rusage begins with ru_utime and ru_stime, two struct timeval.
  const usage = new BigInt64Array(18);
  if (lib().symbols.getrusage(0, usage) !== 0) throw new Error("getrusage failed");
  return Number(usage[0] + usage[2]) + Number(usage[1] + usage[3]) / 1e6;
}

/**
 * Sets the soft CPU-time limit to the CPU seconds used so far plus `seconds`
 * (the hard limit stays unlimited, so the next request can raise it again).
 *
 * @example
 * ```ts ignore
 * limitCpuTime(120); // before each request
 * ```
 */
export function limitCpuTime(seconds: number): void {
  setLimit(RLIMIT_CPU, BigInt(Math.ceil(cpuSecondsUsed() + seconds)), RLIM_INFINITY);
}

/** seccomp audit architecture and syscall numbers of the machines the filter knows. */
const SYSCALLS: Record<string, { arch: number; deny: number[]; clone: number; clone3: number }> = {
  x86_64: { arch: 0xc000003e, deny: [57, 58], clone: 56, clone3: 435 }, // fork, vfork
  aarch64: { arch: 0xc00000b7, deny: [], clone: 220, clone3: 435 },
};

/**
 * Installs a seccomp filter on every thread of this process that fails
 * `fork` and `vfork` (EPERM), `clone` without `CLONE_THREAD` (EPERM) and
 * `clone3` (ENOSYS, whose flags a filter cannot read: glibc then falls back to
 * `clone`). Returns false, changing nothing, on an architecture it does not
 * know.
 *
 * @example
 * ```ts ignore
 * forbidNewProcesses(); // fork() in a kernel now returns -1
 * ```
 */
export function forbidNewProcesses(): boolean {
  const sc = SYSCALLS[Deno.build.arch];
  if (!sc) return false;
  const LD_W_ABS = 0x20, JEQ = 0x15, JSET = 0x45, RET = 0x06;
  const ALLOW = 0x7fff0000, ERRNO = 0x00050000, EPERM = 1, ENOSYS = 38, CLONE_THREAD = 0x10000;
  // [code, jt, jf, k]; jumps are relative to the next instruction.
  const prog: [number, number, number, number][] = [];
  const denied = [...sc.deny];
  const n = denied.length;
  // Layout: 0 ld arch; 1 jeq arch; 2 ld nr; 3..3+n-1 jeq denied; 3+n jeq clone3; 4+n jeq clone;
  // 5+n ld args[0]; 6+n jset CLONE_THREAD; 7+n ALLOW; 8+n DENY; 9+n ENOSYS.
  const allow = 7 + n, deny = 8 + n, enosys = 9 + n;
  prog.push([LD_W_ABS, 0, 0, 4]);
  prog.push([JEQ, 0, allow - 2, sc.arch]);
  prog.push([LD_W_ABS, 0, 0, 0]);
  denied.forEach((nr, i) => prog.push([JEQ, deny - (4 + i), 0, nr]));
  prog.push([JEQ, enosys - (4 + n), 0, sc.clone3]);
  prog.push([JEQ, 0, allow - (5 + n), sc.clone]);
  prog.push([LD_W_ABS, 0, 0, 16]);
  prog.push([JSET, allow - (7 + n), deny - (7 + n), CLONE_THREAD]);
  prog.push([RET, 0, 0, ALLOW]);
  prog.push([RET, 0, 0, ERRNO | EPERM]);
  prog.push([RET, 0, 0, ERRNO | ENOSYS]);
  const filter = new Uint8Array(prog.length * 8);
  const view = new DataView(filter.buffer);
  prog.forEach(([code, jt, jf, k], i) => {
    view.setUint16(i * 8, code, true);
    view.setUint8(i * 8 + 2, jt);
    view.setUint8(i * 8 + 3, jf);
    view.setUint32(i * 8 + 4, k >>> 0, true);
  });
  // struct sock_fprog { unsigned short len; struct sock_filter *filter; }
  const fprog = new BigUint64Array(2);
  fprog[0] = BigInt(prog.length);
  fprog[1] = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(filter)));
  const { prctl, syscall } = lib().symbols;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1n, 0n, 0n, 0n) !== 0) {
    throw new Error("PR_SET_NO_NEW_PRIVS failed");
  }
  const SYS_SECCOMP = Deno.build.arch === "x86_64" ? 317n : 277n;
  const SECCOMP_SET_MODE_FILTER = 1n, SECCOMP_FILTER_FLAG_TSYNC = 1n;
  const r = syscall(SYS_SECCOMP, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, fprog);
  if (r !== 0n) throw new Error(`seccomp filter not installed (${r})`);
  return true;
}

/**
 * Applies `limits` to this process (see {@link WorkerLimits}); the CPU limit
 * is applied per request by the caller with {@link limitCpuTime}. Returns
 * what could not be applied (nothing outside Linux), each with its reason:
 * the worker still measures, less contained, and says so on stderr.
 *
 * @example
 * ```ts ignore
 * applyLimits({ parentPid: Deno.ppid, memoryBytes: 2 ** 32, noFork: true });
 * ```
 */
export function applyLimits(limits: WorkerLimits): string[] {
  if (Deno.build.os !== "linux") return ["containment needs Linux"];
  const missed: string[] = [];
  const attempt = (what: string, f: () => unknown) => {
    try {
      if (f() === false) missed.push(`${what}: not on ${Deno.build.arch}`);
    } catch (e) {
      missed.push(`${what}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  if (limits.parentPid !== undefined) {
    attempt("death with the parent", () => dieWithParent(limits.parentPid!));
  }
  if (limits.memoryBytes !== undefined) {
    attempt("memory limit", () => limitAddressSpace(limits.memoryBytes!));
  }
  if (limits.noFork) attempt("no new processes", () => forbidNewProcesses());
  return missed;
}
