/**
 * Kernel argument buffers: 64-byte aligned Float32Arrays outside the V8 heap,
 * and the `float **bufs` pointer table passed to `tb_kernel`.
 *
 * @module
 */

/** Alignment of every buffer, in bytes (one cache line, one AVX-512 vector). */
export const BUFFER_ALIGN = 64;

/** Allocates `size` float32 elements aligned to {@link BUFFER_ALIGN} bytes. */
export function alignedFloat32(size: number): Float32Array {
  if (!Number.isInteger(size) || size < 0) throw new Error(`bad buffer size ${size}`);
  // An explicit ArrayBuffer is never on the moving V8 heap, so its address is stable.
  const backing = new ArrayBuffer(size * 4 + BUFFER_ALIGN);
  const address = Deno.UnsafePointer.value(Deno.UnsafePointer.of(backing));
  const offset = Number(
    (BigInt(BUFFER_ALIGN) - BigInt(address) % BigInt(BUFFER_ALIGN)) %
      BigInt(BUFFER_ALIGN),
  );
  return new Float32Array(backing, offset, size);
}

/** The table of buffer addresses, in order: the `float **bufs` argument. */
export function pointerTable(buffers: Float32Array[]): BigUint64Array<ArrayBuffer> {
  const table = new BigUint64Array(Math.max(1, buffers.length));
  buffers.forEach((buffer, i) => {
    table[i] = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(buffer)));
  });
  return table;
}

/** Float32 buffers placed against inaccessible guard pages, and how to unmap them. */
export interface GuardedBuffers {
  /** One buffer per requested size, its last element against a guard page. */
  buffers: Float32Array[];
  /** True when the guard pages are real (mmap from libc could be loaded). */
  guarded: boolean;
  /** Unmaps the buffers: they must not be touched afterwards. */
  release(): void;
}

const LIBC_SYMBOLS = {
  mmap: { parameters: ["pointer", "usize", "i32", "i32", "i32", "i64"], result: "pointer" },
  mprotect: { parameters: ["pointer", "usize", "i32"], result: "i32" },
  munmap: { parameters: ["pointer", "usize"], result: "i32" },
  sysconf: { parameters: ["i32"], result: "i64" },
} as const;
/** Linux values: PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, _SC_PAGESIZE. */
const PROT_RW = 3, MAP_ANON_PRIVATE = 0x22, SC_PAGESIZE = 30;
let libc: Deno.DynamicLibrary<typeof LIBC_SYMBOLS> | null | undefined;

function openLibc(): Deno.DynamicLibrary<typeof LIBC_SYMBOLS> | null {
  if (libc === undefined) {
    try {
      libc = Deno.build.os === "linux" ? Deno.dlopen("libc.so.6", LIBC_SYMBOLS) : null;
    } catch {
      libc = null;
    }
  }
  return libc;
}

/**
 * Allocates one float32 buffer per size, each in its own mapping whose
 * buffer ends exactly where an inaccessible (`PROT_NONE`) page begins, with
 * another such page before its first page: a kernel that reads or writes
 * past a buffer's end faults at once, every time, instead of corrupting the
 * heap now and then (a read or write before the start faults when it leaves
 * the buffer's first page). Buffers start 4-byte aligned only. Where libc's
 * `mmap` cannot be loaded (not Linux), falls back on {@link alignedFloat32}
 * with `guarded` false.
 *
 * @example
 * ```ts
 * import { guardedFloat32 } from "./buffers.ts";
 * const g = guardedFloat32([3, 1000]);
 * g.buffers[1][999] = 1; // the last element; [1000] would fault
 * g.release();
 * ```
 */
export function guardedFloat32(sizes: number[]): GuardedBuffers {
  const c = openLibc();
  if (!c) return { buffers: sizes.map(alignedFloat32), guarded: false, release() {} };
  const page = Number(c.symbols.sysconf(SC_PAGESIZE));
  const maps: [Deno.PointerValue, bigint][] = [];
  const release = () => {
    for (const [p, bytes] of maps.splice(0)) c.symbols.munmap(p, bytes);
  };
  try {
    const buffers = sizes.map((size) => {
      if (!Number.isInteger(size) || size < 0) throw new Error(`bad buffer size ${size}`);
      const pages = Math.ceil((size * 4) / page);
      const bytes = BigInt((pages + 2) * page);
      const p = c.symbols.mmap(null, bytes, PROT_RW, MAP_ANON_PRIVATE, -1, 0n);
      if (p === null || Deno.UnsafePointer.value(p) === -1n) throw new Error("mmap failed");
      maps.push([p, bytes]);
      const last = Deno.UnsafePointer.offset(p, (pages + 1) * page)!;
      if (
        c.symbols.mprotect(p, BigInt(page), 0) !== 0 ||
        c.symbols.mprotect(last, BigInt(page), 0) !== 0
      ) {
        throw new Error("mprotect failed");
      }
      if (size === 0) return new Float32Array(0);
      const view = Deno.UnsafePointerView.getArrayBuffer(p, pages * page, page);
      return new Float32Array(view, pages * page - size * 4, size);
    });
    return { buffers, guarded: true, release };
  } catch (e) {
    release();
    throw e;
  }
}
