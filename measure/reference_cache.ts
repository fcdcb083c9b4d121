/**
 * Expected outputs computed once: the output of a workload's C reference
 * kernel on the seeded inputs is kept on disk, one file per (reference
 * kernel, seed, {@link REFERENCE_VERSION}), and read back for every later
 * candidate instead of running the reference again. The reference kernel's
 * shared object is named by the content hash of its source and compiler
 * flags, so its name stands for the workload and its shape.
 *
 * A file `<key>.f32` holds the outputs, in signature order, as raw float32;
 * `<key>.json` beside it says what it is. Files are written to a temporary
 * name and renamed, so a reader never sees half a file.
 *
 * @example
 * ```ts
 * import { referenceKey } from "./reference_cache.ts";
 * const signature = { buffers: [{ name: "C", size: 4, role: "output" as const }] };
 * const a = await referenceKey({ reference: "/c/abc.so", signature, seed: 0 });
 * const b = await referenceKey({ reference: "/c/abc.so", signature, seed: 1 });
 * if (a === b) throw new Error("the seed is part of the key");
 * ```
 * @module
 */
import { basename, dirname, join } from "node:path";
import { alignedFloat32, pointerTable } from "./buffers.ts";
import { sha256Hex } from "./builder.ts";
import { fillUniform } from "./prng.ts";
import type { KernelSignature } from "./types.ts";

/**
 * Version of the reference outputs: bump it when the reference kernel's
 * arithmetic or the input generator (`fillUniform`) changes meaning.
 */
export const REFERENCE_VERSION = 1;

/** What identifies a reference output. */
export interface ReferenceId {
  /** Shared object of the C reference kernel (`tb_kernel`), named by its content hash. */
  reference: string;
  signature: KernelSignature;
  /** Seed of the inputs. */
  seed: number;
}

/** The cache key of a reference output (hex SHA-256). */
export async function referenceKey(id: ReferenceId): Promise<string> {
  const sizes = id.signature.buffers.map((b) => `${b.role}:${b.size}`).join(",");
  return await sha256Hex(
    [`v${REFERENCE_VERSION}`, basename(id.reference), id.seed, sizes].join("\u0000"),
  );
}

/** Path of the file holding the reference output of `id` under `dir`. */
export async function referencePath(dir: string, id: ReferenceId): Promise<string> {
  return join(dir, `${await referenceKey(id)}.f32`);
}

/** The seeded inputs and zeroed outputs of a signature, in `bufs[]` order. */
export function seededBuffers(signature: KernelSignature, seed: number): Float32Array[] {
  const buffers = signature.buffers.map((b) => alignedFloat32(b.size));
  fillUniform(seed, buffers.filter((_, i) => signature.buffers[i].role === "input"));
  return buffers;
}

/** Runs the reference kernel on the seeded inputs; returns its outputs in signature order. */
export function computeReference(id: ReferenceId): Float32Array[] {
  const buffers = seededBuffers(id.signature, id.seed);
  // libgomp reads this as it loads: threads that spin after the kernel can crash the process
  // as it exits. The library is never closed: unloading it under live threads crashes too.
  if (Deno.env.get("OMP_WAIT_POLICY") === undefined) Deno.env.set("OMP_WAIT_POLICY", "passive");
  const lib = Deno.dlopen(id.reference, {
    tb_kernel: { parameters: ["buffer"], result: "void" },
  });
  lib.symbols.tb_kernel(pointerTable(buffers));
  return buffers.filter((_, i) => id.signature.buffers[i].role === "output");
}

/** Writes outputs to `path` (atomically, with a `.json` description beside it). */
export async function writeReference(
  path: string,
  id: ReferenceId,
  outputs: Float32Array[],
): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${crypto.randomUUID()}`;
  const file = await Deno.open(tmp, { write: true, create: true, truncate: true });
  try {
    for (const o of outputs) {
      let bytes = new Uint8Array(o.buffer, o.byteOffset, o.byteLength);
      while (bytes.length > 0) bytes = bytes.subarray(await file.write(bytes));
    }
  } finally {
    file.close();
  }
  const about = {
    reference: basename(id.reference),
    seed: id.seed,
    version: REFERENCE_VERSION,
    outputs: id.signature.buffers.filter((b) => b.role === "output").map((b) => b.name),
  };
  await Deno.writeTextFile(path.replace(/\.f32$/, ".json"), JSON.stringify(about) + "\n");
  await Deno.rename(tmp, path);
}

/** Reads the outputs at `path` (sizes from `signature`); throws when the file does not fit. */
export function readReference(path: string, signature: KernelSignature): Float32Array[] {
  const outputs = signature.buffers.filter((b) => b.role === "output");
  const total = outputs.reduce((s, b) => s + b.size, 0);
  const bytes = Deno.readFileSync(path);
  if (bytes.byteLength !== total * 4) {
    throw new Error(`Reference file ${path} holds ${bytes.byteLength} bytes, not ${total * 4}`);
  }
  const all = new Float32Array(bytes.buffer, bytes.byteOffset, total);
  let at = 0;
  return outputs.map((b) => all.subarray(at, at += b.size));
}
