/**
 * The kernel cache's housekeeping: a size cap with least-recently-used
 * eviction, and removal of what killed builds leave behind.
 *
 * The builder marks a file used by setting its modification time ({@link touch})
 * whenever it builds it or serves it from the cache, so modification time
 * orders files from least to most recently used. {@link sweepCache} removes
 * the least recently used files until the cache holds at most
 * {@link SWEEP_TARGET} of its cap, never a file used in the last
 * `keepSeconds` (the kernels being measured) nor one in `keep` (the builder
 * keeps every kernel it built alone: the reference kernels of its runs), and
 * removes temporary files (`*.tmp-*`, compiler temporary folders under
 * {@link TMP_FOLDER}) older than `tmpAgeSeconds`: a build still running
 * never leaves one that old behind.
 *
 * @module
 */

import { join } from "node:path";

/** Default cap of the kernel cache: 1 GiB (about 30,000 kernels of 35 KB). */
export const DEFAULT_CACHE_BYTES = 2 ** 30;

/** A sweep brings an oversized cache down to this share of its cap. */
export const SWEEP_TARGET = 0.8;

/** Folder (inside the cache) holding each compile's `TMPDIR`. */
export const TMP_FOLDER = ".tmp";

/** Options of {@link sweepCache}. */
export interface SweepOptions {
  /** Largest total size of the cache's files in bytes. */
  maxBytes: number;
  /** Files used this recently are never evicted. Default 60. */
  keepSeconds?: number;
  /** Temporary files and folders older than this are removed. Default 600. */
  tmpAgeSeconds?: number;
  /** Files never evicted (this process's reference kernels, say). Default: none. */
  keep?: ReadonlySet<string>;
  /** The current time in ms since the epoch (for tests). Default `Date.now()`. */
  now?: number;
}

/** What {@link sweepCache} did. */
export interface SweepReport {
  /** Total bytes of the cache's files before the sweep (temporary files excluded). */
  bytesBefore: number;
  /** Total bytes after it. */
  bytesAfter: number;
  /** Cached files evicted. */
  evicted: number;
  /** Temporary files and folders removed. */
  temporaries: number;
}

/**
 * Marks `path` used now (its modification time); a missing file or a
 * read-only cache is ignored.
 *
 * @example
 * ```ts ignore
 * await touch(".cache/kernels/abc.so");
 * ```
 */
export async function touch(path: string): Promise<void> {
  const now = new Date();
  try {
    await Deno.utime(path, now, now);
  } catch {
    // Gone or not ours to touch: the cache still works, only less fairly.
  }
}

/** True for a temporary file a build writes and renames (`x.so.tmp-<uuid>`). */
export function isTemporary(name: string): boolean {
  return /\.tmp-[0-9a-f-]+$/.test(name);
}

/**
 * Sweeps the kernel cache in `dir`; see the module documentation.
 *
 * @example
 * ```ts ignore
 * const r = await sweepCache(".cache/kernels", { maxBytes: DEFAULT_CACHE_BYTES });
 * console.log(`${r.evicted} kernels evicted, ${r.bytesAfter} bytes left`);
 * ```
 */
export async function sweepCache(dir: string, options: SweepOptions): Promise<SweepReport> {
  const now = options.now ?? Date.now();
  const keepMs = (options.keepSeconds ?? 60) * 1000;
  const tmpAgeMs = (options.tmpAgeSeconds ?? 600) * 1000;
  const files: { path: string; size: number; used: number }[] = [];
  let temporaries = 0;
  const remove = async (path: string, recursive = false) => {
    try {
      await Deno.remove(path, { recursive });
      return true;
    } catch {
      return false; // Removed meanwhile by another process.
    }
  };
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) entries.push(e);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      return { bytesBefore: 0, bytesAfter: 0, evicted: 0, temporaries: 0 };
    }
    throw e;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.name === TMP_FOLDER && entry.isDirectory) {
      for await (const sub of Deno.readDir(path)) {
        const subPath = join(path, sub.name);
        const stat = await Deno.stat(subPath).catch(() => undefined);
        if (stat && now - (stat.mtime?.getTime() ?? 0) > tmpAgeMs) {
          if (await remove(subPath, true)) temporaries++;
        }
      }
      continue;
    }
    if (!entry.isFile) continue;
    const stat = await Deno.stat(path).catch(() => undefined);
    if (!stat) continue;
    const used = stat.mtime?.getTime() ?? 0;
    if (isTemporary(entry.name)) {
      if (now - used > tmpAgeMs && await remove(path)) temporaries++;
      continue;
    }
    files.push({ path, size: stat.size, used });
  }
  const bytesBefore = files.reduce((sum, f) => sum + f.size, 0);
  let bytes = bytesBefore, evicted = 0;
  if (bytes > options.maxBytes) {
    const target = options.maxBytes * SWEEP_TARGET;
    files.sort((a, b) => a.used - b.used);
    for (const f of files) {
      if (bytes <= target || now - f.used < keepMs) break;
      if (options.keep?.has(f.path)) continue;
      if (await remove(f.path)) {
        bytes -= f.size;
        evicted++;
      }
    }
  }
  return { bytesBefore, bytesAfter: bytes, evicted, temporaries };
}
