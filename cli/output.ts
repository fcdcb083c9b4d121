/**
 * Checks of the paths a command writes (`--out`), made before anything is
 * written: an output never replaces the records database (or its `-wal`,
 * `-shm` or `-journal` file), another SQLite file or a directory, however the
 * path reaches it (symbolic links, `..`, hard links).
 * @module
 */
import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { UsageError } from "./args.ts";
import { isSqliteFile } from "../datasets/db.ts";

/**
 * Where `path` leads once every symbolic link is followed (it need not exist).
 *
 * @example
 * ```ts
 * import { resolvedPath } from "./output.ts";
 * if (resolvedPath("/no/such/../dir/x.csv") !== "/no/dir/x.csv") throw new Error();
 * ```
 */
export function resolvedPath(path: string, depth = 0): string {
  const abs = resolve(path);
  if (depth > 40) return abs;
  try {
    const info = lstatSync(abs);
    if (info.isSymbolicLink()) {
      return resolvedPath(resolve(dirname(abs), readlinkSync(abs)), depth + 1);
    }
    return realpathSync(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : resolve(resolvedPath(parent, depth + 1), basename(abs));
  }
}

/** What an output check knows: the flag, and the records database it must spare. */
export interface OutputCheck {
  /** The flag that gave the path, e.g. `"--out"`. */
  flag: string;
  /** The records database the command reads (`--db`). */
  db?: string;
}

function sameFile(a: string, b: string): boolean {
  try {
    const x = statSync(a), y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * Throws a {@link UsageError} naming `flag` when writing the file `path`
 * would replace the records database or one of its side files, an SQLite
 * file, or a directory. An existing ordinary file may be replaced.
 *
 * @example
 * ```ts
 * import { checkOutputFile } from "./output.ts";
 * checkOutputFile("runs/new.csv", { flag: "--out", db: "runs.db" });
 * ```
 */
export function checkOutputFile(path: string, o: OutputCheck): void {
  const target = resolvedPath(path);
  const shown = `${o.flag} "${path}"`;
  if (o.db !== undefined && o.db !== ":memory:") {
    const db = resolvedPath(o.db);
    for (const side of ["", "-wal", "-shm", "-journal"]) {
      if (target === db + side || sameFile(target, db + side)) {
        throw new UsageError(
          `${shown} is the records database${side ? ` (its ${side} file)` : ""} --db "${o.db}"; ` +
            `give another output path`,
        );
      }
    }
  }
  let info;
  try {
    info = statSync(target);
  } catch {
    for (let d = dirname(target); d !== dirname(d); d = dirname(d)) {
      try {
        if (statSync(d).isDirectory()) return;
        throw new UsageError(`${shown}: "${d}" is a file, not a directory`);
      } catch (e) {
        if (e instanceof UsageError) throw e;
      }
    }
    return;
  }
  if (info.isDirectory()) throw new UsageError(`${shown} is a directory; give a file path`);
  if (isSqliteFile(target)) {
    throw new UsageError(`${shown} is an SQLite database; tunebook does not overwrite databases`);
  }
}

/**
 * Throws a {@link UsageError} naming `flag` when `dir` exists and is not a
 * directory, or when one of the `files` the command writes into it fails
 * {@link checkOutputFile}.
 *
 * @example
 * ```ts
 * import { checkOutputDir } from "./output.ts";
 * checkOutputDir("report", ["index.html"], { flag: "--out", db: "runs.db" });
 * ```
 */
export function checkOutputDir(dir: string, files: string[], o: OutputCheck): void {
  const target = resolvedPath(dir);
  let info;
  try {
    info = statSync(target);
  } catch {
    info = undefined;
  }
  if (info && !info.isDirectory()) {
    throw new UsageError(
      `${o.flag} "${dir}" is a file, not a directory (the command writes ${
        files.join(", ")
      } into it)`,
    );
  }
  for (const f of files) checkOutputFile(resolve(target, f), { ...o, flag: `${o.flag} "${dir}":` });
}

/**
 * Prints what a person reads of a command's result (a table, the paths it
 * wrote) on stdout. The convention of every command in cli/: results on
 * stdout, the JSON summary as the last line of stdout (`| tail -n 1` keeps
 * it alone), progress and notes on stderr (`--quiet` silences them); so
 * `deno task compare ... > out.txt` keeps the tables and the summary. Trials
 * are numbered from 1 in every output.
 *
 * @example
 * ```ts
 * import { printResult } from "./output.ts";
 * printResult("| strategy | score |\n| --- | --- |\n| sa | 0.710 |");
 * ```
 */
export function printResult(text: string): void {
  console.log(text);
}

/**
 * The JSON summary of a command's stdout: its last non-empty line, parsed (typed as
 * `JSON.parse` types it).
 *
 * @example
 * ```ts
 * import { lastJsonLine } from "./output.ts";
 * const s = lastJsonLine('| a |\n{"runs": 2}\n') as { runs: number };
 * if (s.runs !== 2) throw new Error();
 * ```
 */
// deno-lint-ignore no-explicit-any -- what JSON.parse gives: the caller knows the command's shape
export function lastJsonLine(stdout: string): any {
  const last = stdout.trimEnd().split("\n").at(-1);
  if (last === undefined || last.trim() === "") {
    throw new SyntaxError("lastJsonLine: the output is empty (no JSON summary line)");
  }
  return JSON.parse(last);
}
