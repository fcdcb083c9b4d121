/**
 * The cause of a failed file operation in plain words, for the one line a
 * command prints: a full disk, read-only media, a permission. Deno's and
 * Node's file errors carry the errno name as `code`; SQLite's say it in
 * their message (`database or disk is full`, `attempt to write a readonly
 * database`, `disk I/O error`).
 *
 * @example
 * ```ts
 * import { ioCause } from "./io_errors.ts";
 * const e = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
 * if (ioCause(e) !== "no space left on device (ENOSPC)") throw new Error(ioCause(e));
 * ```
 * @module
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";

const CAUSES: Record<string, string> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EROFS: "read-only file system",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EIO: "input/output error",
  EFBIG: "file too large",
  ENOENT: "no such file or directory",
  ENOTDIR: "a parent is not a directory",
  EISDIR: "it is a directory",
};

/** The errno name of `e` (`"ENOSPC"`), when it has one. */
export function ioCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown })?.code;
  if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
  const m = /\b(E[A-Z]{3,})\b/.exec(e instanceof Error ? e.message : String(e));
  if (m && m[1] in CAUSES) return m[1];
  const os = /os error (\d+)/.exec(e instanceof Error ? e.message : String(e));
  const byNumber: Record<string, string> = {
    "28": "ENOSPC",
    "30": "EROFS",
    "13": "EACCES",
    "5": "EIO",
    "122": "EDQUOT",
  };
  return os ? byNumber[os[1]] : undefined;
}

/**
 * The cause of `e` in words with its errno name (`"no space left on device
 * (ENOSPC)"`), else its message.
 */
export function ioCause(e: unknown): string {
  const code = ioCode(e);
  if (code && CAUSES[code]) return `${CAUSES[code]} (${code})`;
  return e instanceof Error ? e.message : String(e);
}

/**
 * Why `path` (or, when it does not exist, its nearest existing directory)
 * cannot be written: `"read-only file system (EROFS)"`, `"permission denied
 * (EACCES)"`; undefined when it can. A file is opened for writing (not
 * truncated, nothing written); a directory gets a probe file, removed at
 * once. (`access(2)` would do, but Deno's `node:fs` answers it from the mode
 * bits, which say nothing of read-only media.) For error messages only.
 *
 * @example
 * ```ts
 * import { unwritable } from "./io_errors.ts";
 * if (unwritable(Deno.makeTempDirSync()) !== undefined) throw new Error("a temp dir is writable");
 * ```
 */
export function unwritable(path: string): string | undefined {
  let target = resolve(path);
  while (!existsSync(target) && dirname(target) !== target) target = dirname(target);
  try {
    if (Deno.statSync(target).isDirectory) {
      Deno.removeSync(Deno.makeTempFileSync({ dir: target, prefix: ".tunebook-probe-" }));
    } else {
      Deno.openSync(target, { write: true }).close();
    }
    return undefined;
  } catch (e) {
    return ioCause(e);
  }
}

/** The errno names of full or read-only media: a command stops on them, exit 2. */
const MEDIA = new Set(["ENOSPC", "EDQUOT", "EROFS", "EFBIG"]);

/**
 * For an error of full or read-only media (ENOSPC, EDQUOT, EROFS, EFBIG):
 * the line a command prints, naming the operation's path and the cause
 * (`"writefile 'rep/index.html': no space left on device (ENOSPC)"`);
 * undefined for any other error.
 *
 * @example
 * ```ts
 * import { mediaError } from "./io_errors.ts";
 * const e = new Error("No space left on device (os error 28): writefile 'rep/index.html'");
 * if (mediaError(e) !== "writefile 'rep/index.html': no space left on device (ENOSPC)") {
 *   throw new Error(mediaError(e));
 * }
 * if (mediaError(new Error("boom")) !== undefined) throw new Error();
 * ```
 */
export function mediaError(e: unknown): string | undefined {
  const code = ioCode(e);
  if (!code || !MEDIA.has(code)) return undefined;
  const message = e instanceof Error ? e.message : String(e);
  // Deno: "No space left on device (os error 28): writefile 'PATH'"; Node: "ENOSPC: ..., write 'PATH'".
  const where = /(?:\(os error \d+\)|E[A-Z]+: [^,]*), (.*)$/.exec(message)?.[1] ??
    /\(os error \d+\): (.*)$/.exec(message)?.[1];
  return where ? `${where}: ${ioCause(e)}` : ioCause(e);
}
