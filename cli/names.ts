/**
 * Unknown names on the command line get a suggestion: `--space pnpoly` says
 * `did you mean pnpoly_RTX_3090?` and lists the known spaces, instead of a
 * file-not-found with an absolute path.
 * @module
 */
import { existsSync } from "node:fs";
import { isAbsolute } from "node:path";
import { ALL_SPACES, resolveCachePath } from "../search/replay.ts";
import { editDistance } from "../datasets/cache_names.ts";

/**
 * The known names closest to `name`: those that start with it or contain it
 * (case-insensitive), else those within a few edits (a third of its length,
 * at least 2); at most three, closest first.
 *
 * @example
 * ```ts
 * import { closestNames } from "./names.ts";
 * const known = ["gemm_RTX_3090", "pnpoly_RTX_3090", "convolution_A100"];
 * if (closestNames("pnpoly", known)[0] !== "pnpoly_RTX_3090") throw new Error();
 * if (closestNames("gemm_RTX_3909", known)[0] !== "gemm_RTX_3090") throw new Error();
 * if (closestNames("zzz", known).length !== 0) throw new Error();
 * ```
 */
export function closestNames(name: string, known: readonly string[]): string[] {
  const low = name.toLowerCase();
  if (low === "") return [];
  const containing = known.filter((k) => k.toLowerCase().includes(low));
  if (containing.length) {
    return containing.sort((a, b) => a.length - b.length).slice(0, 3);
  }
  const limit = Math.max(2, Math.floor(name.length / 3));
  return known
    .map((k) => ({ k, d: editDistance(low, k.toLowerCase()) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map((x) => x.k);
}

/**
 * `"; did you mean X?"` (or `"X or Y?"`) for an unknown `name`, or `""` when
 * no known name is close.
 *
 * @example
 * ```ts
 * import { didYouMean } from "./names.ts";
 * if (didYouMean("matmull", ["matmul", "dense"]) !== "; did you mean matmul?") throw new Error();
 * ```
 */
export function didYouMean(name: string, known: readonly string[]): string {
  const close = closestNames(name, known);
  return close.length ? `; did you mean ${close.join(" or ")}?` : "";
}

/**
 * The message for a `--space` that names no recorded space (a bare name,
 * not a path, not a workload, not a file here), or undefined when `spec` is
 * a known space, a path or a file.
 *
 * @example
 * ```ts
 * import { unknownSpace } from "./names.ts";
 * if (!unknownSpace("pnpoly")?.includes("did you mean pnpoly_RTX_3090?")) throw new Error();
 * if (unknownSpace("gemm_RTX_3090") !== undefined) throw new Error();
 * ```
 */
export function unknownSpace(spec: string, flag = "--space"): string | undefined {
  const bare = !isAbsolute(spec) && !/[\\/:]/.test(spec) && !/\.json(\.gz)?$/.test(spec);
  if (!bare || ALL_SPACES.includes(spec) || existsSync(resolveCachePath(spec))) return undefined;
  return `${flag} ${spec}: no recorded space of that name${didYouMean(spec, ALL_SPACES)} ` +
    `(known: ${ALL_SPACES.join(", ")}; or a path to a Kernel Tuner cache, or a workload ` +
    `such as matmul:256,256,256)`;
}
