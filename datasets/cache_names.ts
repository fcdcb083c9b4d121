/**
 * The one rule that turns a cache name into a file, and back: a bare name such
 * as `"gemm_RTX_3090"` or `"resnet18_conv2_cpu"` (no folder, no `.json`
 * suffix) is `<name>.json.gz` in the repository's Kernel Tuner folder
 * (`data/kerneltuner/`) or, when not there, in its recorded CPU folder
 * (`data/conv2d_cpu/`); anything else is a path. {@link cacheName} goes the
 * other way (a path or name to the name shown in tables and file names), and
 * {@link nearestCacheNames} finds the known names closest to a misspelt one.
 *
 * @example
 * ```ts
 * import { cacheName, nearestCacheNames, resolveCachePath } from "./cache_names.ts";
 * if (!resolveCachePath("pnpoly_RTX_3090").endsWith("/data/kerneltuner/pnpoly_RTX_3090.json.gz")) {
 *   throw new Error();
 * }
 * if (cacheName("/some/where/gemm_RTX_3090.json.gz") !== "gemm_RTX_3090") throw new Error();
 * if (nearestCacheNames("pnpoly_RTX3090")[0] !== "pnpoly_RTX_3090") throw new Error();
 * ```
 * @module
 */
import { existsSync } from "node:fs";
import { basename, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The repository's folder of Kernel Tuner data (`data/kerneltuner/`: six
 * caches of real GPUs and their space files, MIT licence), as a path ending
 * in a separator.
 */
export const KERNELTUNER_DIR: string = fileURLToPath(
  new URL("../data/kerneltuner/", import.meta.url),
);

/**
 * The recorded CPU data set of this repository (`data/conv2d_cpu/`: ResNet-18
 * conv layers measured exhaustively, e.g. `resnet18_conv2_cpu`), as a path
 * ending in a separator.
 */
export const RECORDED_DIR: string = fileURLToPath(new URL("../data/conv2d_cpu/", import.meta.url));

/** Names (without `.json.gz`) of the six cache files of {@link KERNELTUNER_DIR}. */
export const KERNELTUNER_CACHE_NAMES: readonly string[] = [
  "convolution_A100",
  "convolution_A4000",
  "convolution_MI250X",
  "dedispersion_A100",
  "gemm_RTX_3090",
  "pnpoly_RTX_3090",
];

/** Names of the recorded CPU caches of {@link RECORDED_DIR}. */
export const RECORDED_CACHE_NAMES: readonly string[] = [1, 2, 3, 4].map((i) =>
  `resnet18_conv${i}_cpu`
);

/**
 * Every cache known by name (`--space all` of `compare` and the benches): the
 * Kernel Tuner caches, then the recorded CPU layers.
 */
export const ALL_CACHE_NAMES: readonly string[] = [
  ...KERNELTUNER_CACHE_NAMES,
  ...RECORDED_CACHE_NAMES,
];

/** Whether `spec` is a bare cache name (no folder, no `.json`/`.json.gz` suffix), not a path. */
export function isCacheName(spec: string): boolean {
  return !isAbsolute(spec) && !/[\\/]/.test(spec) && !/\.json(\.gz)?$/.test(spec);
}

/**
 * The file of cache `name` in folder `dir` (not checked for existence).
 *
 * @param name a bare cache name such as `"gemm_RTX_3090"`
 * @param dir the folder (default {@link KERNELTUNER_DIR})
 */
export function cacheFile(name: string, dir: string = KERNELTUNER_DIR): string {
  return join(dir, `${name}.json.gz`);
}

/**
 * Where a cache name or path points: a bare name is a file of `dir` or, when
 * not there, of {@link RECORDED_DIR}; anything else is a path, returned as is.
 *
 * @param pathOrName a path, or the name of a Kernel Tuner or recorded cache
 * @param dir the Kernel Tuner folder (default {@link KERNELTUNER_DIR})
 */
export function resolveCachePath(pathOrName: string, dir: string = KERNELTUNER_DIR): string {
  if (typeof pathOrName !== "string") {
    throw new TypeError(`pathOrName must be a cache name or path, got ${typeof pathOrName}`);
  }
  if (!isCacheName(pathOrName)) return pathOrName;
  const kt = cacheFile(pathOrName, dir);
  const recorded = cacheFile(pathOrName, RECORDED_DIR);
  return !existsSync(kt) && existsSync(recorded) ? recorded : kt;
}

/** The name of a cache given by name or path: its file name without `.json`/`.json.gz`. */
export function cacheName(pathOrName: string): string {
  return basename(pathOrName).replace(/\.json(\.gz)?$/, "");
}

/** Edit distance (insertions, deletions, substitutions; case-insensitive) of two strings. */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase(), y = b.toLowerCase();
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      row.push(
        Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1)),
      );
    }
    prev = row;
  }
  return prev[y.length];
}

/**
 * The known names nearest to `name` by {@link editDistance} (ties in the
 * order of `known`), at most `count` of them.
 *
 * @param name the name asked for
 * @param known the names to choose from (default {@link ALL_CACHE_NAMES})
 * @param count how many (default 3)
 */
export function nearestCacheNames(
  name: string,
  known: readonly string[] = ALL_CACHE_NAMES,
  count = 3,
): string[] {
  return known
    .map((k, i) => ({ k, i, d: editDistance(name, k) }))
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .slice(0, count)
    .map((e) => e.k);
}
