/**
 * Reads a file as text with bounded memory: the bytes read are counted as
 * they stream in and reading stops past a cap, and a gzip-compressed file
 * (recognised by its magic bytes) is inflated as a stream with a second cap
 * on the inflated bytes. A 6 MB `.json.gz` that inflates to 6 GB, or
 * `/dev/zero`, ends in a {@link LimitError} after at most the cap is held.
 *
 * @example
 * ```ts
 * import { readBoundedText } from "./read_bounded.ts";
 * import { LIMITS } from "../ir/limits.ts";
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, "[1, 2]");
 * const text = await readBoundedText(path, {
 *   maxBytes: LIMITS.traceFileBytes,
 *   maxInflatedBytes: LIMITS.traceFileBytes,
 * });
 * await Deno.remove(path);
 * if (text !== "[1, 2]") throw new Error();
 * ```
 * @module
 */
import { formatBytes, type Limit, LimitError, limitMessage } from "../ir/limits.ts";

/**
 * Caps of {@link readBoundedText}.
 *
 * @example
 * ```ts
 * import type { ReadBounds } from "./read_bounded.ts";
 * import { LIMITS } from "../ir/limits.ts";
 * const bounds: ReadBounds = {
 *   maxBytes: LIMITS.cacheFileBytes,
 *   maxInflatedBytes: LIMITS.inflatedBytes,
 * };
 * console.log(bounds.maxBytes.name);
 * ```
 */
export interface ReadBounds {
  /** Bytes the file may hold as stored. */
  maxBytes: Limit;
  /** Bytes a gzip-compressed file may inflate to. */
  maxInflatedBytes: Limit;
}

/** Bytes past a cap: the stream is cancelled and a {@link LimitError} thrown. */
function capped(limit: Limit, what: string): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > limit.value) {
        controller.error(new LimitError(limitMessage(what, limit), limit));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}

/** A stream that first yields `head`, then the rest of `reader`. */
function prepend(
  head: Uint8Array[],
  reader: ReadableStreamDefaultReader<Uint8Array>,
): ReadableStream<Uint8Array> {
  return new ReadableStream({
    async pull(controller) {
      const next = head.shift();
      if (next) return controller.enqueue(next);
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * Reads `path` as UTF-8 text, inflating it when it starts with the gzip magic
 * bytes, never holding more than the caps.
 *
 * @param path the file
 * @param bounds the caps on the stored and inflated bytes
 * @throws {LimitError} when a cap is passed (the message names the limit)
 * @throws {Deno.errors.NotFound} and other errors of `Deno.open`,
 *   `Deno.errors.IsADirectory`, and a `TypeError` for corrupt gzip data
 */
export async function readBoundedText(path: string, bounds: ReadBounds): Promise<string> {
  return (await readBounded(path, bounds)).text;
}

/**
 * {@link readBoundedText}, also saying whether the file was gzip-compressed.
 *
 * @param path the file
 * @param bounds the caps on the stored and inflated bytes
 * @example
 * ```ts
 * import { readBounded } from "./read_bounded.ts";
 * import { LIMITS } from "../ir/limits.ts";
 * const path = await Deno.makeTempFile({ suffix: ".json" });
 * await Deno.writeTextFile(path, "{}");
 * const { text, gzip } = await readBounded(path, {
 *   maxBytes: LIMITS.cacheFileBytes,
 *   maxInflatedBytes: LIMITS.inflatedBytes,
 * });
 * await Deno.remove(path);
 * if (text !== "{}" || gzip) throw new Error();
 * ```
 */
export async function readBounded(
  path: string,
  bounds: ReadBounds,
): Promise<{ text: string; gzip: boolean }> {
  const file = await Deno.open(path, { read: true });
  let raw: ReadableStream<Uint8Array>;
  try {
    const info = await file.stat();
    if (info.isDirectory) throw new Deno.errors.IsADirectory(`"${path}" is a directory`);
    if (info.isFile && info.size > bounds.maxBytes.value) {
      throw new LimitError(
        limitMessage(`the file holds ${formatBytes(info.size)}`, bounds.maxBytes),
        bounds.maxBytes,
      );
    }
    raw = file.readable.pipeThrough(
      capped(bounds.maxBytes, "the file is too large"),
    );
  } catch (e) {
    file.close();
    throw e;
  }
  const reader = raw.getReader();
  const head: Uint8Array[] = [];
  let headBytes = 0;
  try {
    while (headBytes < 2) {
      const { done, value } = await reader.read();
      if (done) break;
      head.push(value);
      headBytes += value.byteLength;
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  }
  const first = new Uint8Array(Math.min(2, headBytes));
  let at = 0;
  for (const h of head) {
    for (let i = 0; i < h.byteLength && at < first.length; i++) first[at++] = h[i];
  }
  const gzip = first.length === 2 && first[0] === 0x1f && first[1] === 0x8b;
  let stream = prepend(head, reader);
  if (gzip) {
    stream = stream
      .pipeThrough(new DecompressionStream("gzip") as TransformStream<Uint8Array, Uint8Array>)
      .pipeThrough(
        capped(bounds.maxInflatedBytes, "its gzip data inflate too far"),
      );
  }
  const decoder = new TextDecoder();
  const parts: string[] = [];
  const out = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await out.read();
      if (done) break;
      parts.push(decoder.decode(value, { stream: true }));
    }
  } catch (e) {
    await out.cancel().catch(() => {});
    throw e;
  }
  parts.push(decoder.decode());
  return { text: parts.join(""), gzip };
}
