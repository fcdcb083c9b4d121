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
