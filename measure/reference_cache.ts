/**
 * Expected outputs computed once: the output of a workload's C reference
 * kernel on the seeded inputs is kept on disk, one file per (reference
 * kernel, seed, {@link REFERENCE_VERSION}), and read back for every later
 * candidate instead of running the reference again. The reference kernel's
 * shared object is named by the content hash of its source and compiler
 * flags, so its name stands for the workload and its shape.
 *
 * A file `<key>.f32` holds the outputs, in signature order, as raw float32,
 * `<key>.in.f32` the seeded inputs (reading them is several times faster
 * than generating them again: 0.2 s against 0.7 s for matmul 4096³), and
 * `<key>.json` says what they are. Files are written to a temporary name and
 * renamed, the outputs last, so a reader never sees half a file.
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

/**
 * Runs the reference kernel on the seeded inputs; returns every buffer in
 * `bufs[]` order (inputs, then the reference outputs).
 */
export function computeReference(id: ReferenceId): Float32Array[] {
  const buffers = seededBuffers(id.signature, id.seed);
  // libgomp reads this as it loads: threads that spin after the kernel can crash the process
  // as it exits. The library is never closed: unloading it under live threads crashes too.
  if (Deno.env.get("OMP_WAIT_POLICY") === undefined) Deno.env.set("OMP_WAIT_POLICY", "passive");
  const lib = Deno.dlopen(id.reference, {
    tb_kernel: { parameters: ["buffer"], result: "void" },
  });
  lib.symbols.tb_kernel(pointerTable(buffers));
  return buffers;
}

async function writeAtomically(path: string, arrays: Float32Array[]): Promise<void> {
  const tmp = `${path}.tmp-${crypto.randomUUID()}`;
  const file = await Deno.open(tmp, { write: true, create: true, truncate: true });
  try {
    for (const o of arrays) {
      let bytes = new Uint8Array(o.buffer, o.byteOffset, o.byteLength);
      while (bytes.length > 0) bytes = bytes.subarray(await file.write(bytes));
    }
  } finally {
    file.close();
  }
  await Deno.rename(tmp, path);
}

function readFloats(path: string, total: number): Float32Array {
  const bytes = Deno.readFileSync(path);
  if (bytes.byteLength !== total * 4) {
    throw new Error(`Reference file ${path} holds ${bytes.byteLength} bytes, not ${total * 4}`);
  }
  return new Float32Array(bytes.buffer, bytes.byteOffset, total);
}

function split(all: Float32Array, sizes: number[]): Float32Array[] {
  let at = 0;
  return sizes.map((n) => all.subarray(at, at += n));
}

/**
 * Writes the buffers of {@link computeReference} under `path` (the outputs)
 * and `path` with `.in.f32` (the inputs), with a `.json` description.
 */
export async function writeReference(
  path: string,
  id: ReferenceId,
  buffers: Float32Array[],
): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  const roles = id.signature.buffers.map((b) => b.role);
  const about = {
    reference: basename(id.reference),
    seed: id.seed,
    version: REFERENCE_VERSION,
    inputs: id.signature.buffers.filter((b) => b.role === "input").map((b) => b.name),
    outputs: id.signature.buffers.filter((b) => b.role === "output").map((b) => b.name),
  };
  await Deno.writeTextFile(path.replace(/\.f32$/, ".json"), JSON.stringify(about) + "\n");
  await writeAtomically(inputsPath(path), buffers.filter((_, i) => roles[i] === "input"));
  await writeAtomically(path, buffers.filter((_, i) => roles[i] === "output"));
}

/** Path of the inputs beside the outputs at `path`. */
export function inputsPath(path: string): string {
  return path.replace(/\.f32$/, ".in.f32");
}

/** Reads the outputs at `path` (sizes from `signature`); throws when the file does not fit. */
export function readReference(path: string, signature: KernelSignature): Float32Array[] {
  const sizes = signature.buffers.filter((b) => b.role === "output").map((b) => b.size);
  return split(readFloats(path, sizes.reduce((s, n) => s + n, 0)), sizes);
}

/**
 * The buffers of a measurement in `bufs[]` order: the stored inputs beside
 * `path` and fresh outputs filled with NaN.
 */
export function readInputs(path: string, signature: KernelSignature): Float32Array[] {
  const sizes = signature.buffers.filter((b) => b.role === "input").map((b) => b.size);
  const inputs = split(readFloats(inputsPath(path), sizes.reduce((s, n) => s + n, 0)), sizes);
  let k = 0;
  return signature.buffers.map((b) =>
    b.role === "input" ? inputs[k++] : alignedFloat32(b.size).fill(NaN)
  );
}
