/**
 * Reads small `/proc` files through libc (`open`, `read`, `close` by FFI):
 * Deno grants `/proc/self` and `/proc/PID` only with `--allow-all`, while
 * the worker and the tuner hold `--allow-ffi`.
 *
 * @module
 */

const SYMBOLS = {
  open: { parameters: ["buffer", "i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  close: { parameters: ["i32"], result: "i32" },
} as const;

let libc: Deno.DynamicLibrary<typeof SYMBOLS> | undefined;

/**
 * The text of `path` (at most 64 KiB), or undefined when it cannot be read
 * (no such file, no FFI permission, not Linux).
 *
 * @example
 * ```ts ignore
 * const stat = readProcFile(`/proc/${pid}/stat`);
 * ```
 */
export function readProcFile(path: string): string | undefined {
  try {
    // Never prompt for the permission: without it, no answer.
    if (!libc && Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return undefined;
    libc ??= Deno.dlopen("libc.so.6", SYMBOLS);
  } catch {
    return undefined;
  }
  const fd = libc.symbols.open(new TextEncoder().encode(`${path}\0`), 0);
  if (fd < 0) return undefined;
  try {
    const buf = new Uint8Array(65536);
    let size = 0;
    for (;;) {
      const n = Number(libc.symbols.read(fd, buf.subarray(size), BigInt(buf.length - size)));
      if (n <= 0) break;
      size += n;
      if (size === buf.length) break;
    }
    return new TextDecoder().decode(buf.subarray(0, size));
  } finally {
    libc.symbols.close(fd);
  }
}
