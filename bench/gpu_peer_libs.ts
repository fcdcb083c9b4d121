/**
 * What `bench/gpu_peers.ts` compares against: where cuBLAS and cuDNN are
 * found (a given path, an environment variable, the CUDA toolkit, Debian's
 * packages, or the `nvidia-*` wheels PyTorch installs into a Python
 * site-packages folder), and which workloads each peer runs (the ResNet-18
 * convolutions come from the network library's task extraction, batch 1,
 * 224x224).
 *
 * @example
 * ```ts
 * import { resnet18Convs } from "./gpu_peer_libs.ts";
 * const convs = resnet18Convs();
 * // conv2 of ResNet-18 (the first 3x3 convolution of layer1) is among them.
 * if (!convs.some((w) => w.shape.join(",") === "1,64,56,56,64,3,3,1,1")) throw new Error();
 * ```
 * @module
 */
import { join } from "node:path";
import { resnet18 } from "../network/builtin.ts";
import { extractTasks } from "../network/tasks.ts";
import type { Workload } from "../ir/workloads.ts";

/** A peer library: its sonames (newest first) and the wheel folder that ships it. */
export interface PeerLibrary {
  /** Name in messages. */
  name: "cuBLAS" | "cuDNN";
  /** Environment variable naming the library's path. */
  env: string;
  /** File names tried, newest first. */
  sonames: readonly string[];
  /** Folder of PyTorch's `nvidia-*` wheel, under `site-packages/nvidia/`. */
  wheel: string;
}

/** cuBLAS 13 or 12. */
export const CUBLAS: PeerLibrary = {
  name: "cuBLAS",
  env: "TB_CUBLAS",
  sonames: ["libcublas.so.13", "libcublas.so.12", "libcublas.so"],
  wheel: "cublas",
};

/** cuDNN 9 or 8. */
export const CUDNN: PeerLibrary = {
  name: "cuDNN",
  env: "TB_CUDNN",
  sonames: ["libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"],
  wheel: "cudnn",
};

/** Folders searched, in order, before Python's site-packages. */
export const LIBRARY_DIRS: readonly string[] = [
  "/usr/local/cuda/lib64",
  "/usr/lib/x86_64-linux-gnu",
  "/usr/local/cuda/targets/x86_64-linux/lib",
];

/** Python folders whose `site-packages` / `dist-packages` may hold `nvidia/<wheel>/lib`. */
function pythonLibDirs(): string[] {
  const roots = ["/usr/local/lib", "/usr/lib", `${Deno.env.get("HOME") ?? "/root"}/.local/lib`];
  const out: string[] = [];
  for (const root of roots) {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(root)];
    } catch {
      continue;
    }
    const pythons = entries.map((e) => e.name).filter((n) => /^python3(\.\d+)?$/.test(n)).sort();
    for (const name of pythons) {
      for (const sub of ["site-packages", "dist-packages"]) out.push(join(root, name, sub));
    }
  }
  return out;
}

/**
 * The first existing path of `lib`: `given`, then `$<env>`, then each soname in
 * {@link LIBRARY_DIRS}, then in the `nvidia/<wheel>/lib` folder of any Python's
 * packages. Undefined when none exists.
 */
export function findLibrary(lib: PeerLibrary, given?: string): string | undefined {
  const dirs = [
    ...LIBRARY_DIRS,
    ...pythonLibDirs().map((d) => join(d, "nvidia", lib.wheel, "lib")),
  ];
  const candidates = [
    given,
    Deno.env.get(lib.env),
    ...dirs.flatMap((d) => lib.sonames.map((s) => join(d, s))),
  ];
  return candidates.find((p) => p !== undefined && p !== "" && isFile(p));
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** The distinct convolutions of ResNet-18 (batch 1, 224x224), in network order. */
export function resnet18Convs(): Workload[] {
  return extractTasks(resnet18()).map((t) => t.workload).filter((w) => w.name === "conv2d");
}
