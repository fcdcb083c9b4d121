/**
 * The layer order of the top-level folders, checked on every import.
 *
 * Reads the imports of every `.ts` file (and every code cell of the notebooks) with a
 * small parser of `import ... from`, `export ... from`, `import "..."` and `import("...")`,
 * and fails on an import against the order of issue 14:
 *
 * ```
 * ir <- measure, datasets <- costmodel <- search <- rl <- network <- tuner <- remote <- cli, notebooks,
 *   examples
 *   <- bench
 * ```
 *
 * A folder imports only folders to its left (not its siblings: measure and datasets do
 * not import each other, nor do cli and notebooks); benchmarks sit on top, so they share
 * the commands' flag parsing and output checks (`cli/args.ts`, `cli/output.ts`); `plots` sits just above `ir`: it
 * imports only `ir` (its argument checks, `ir/check.ts`), and any folder but `ir` may import it. So no two folders import each
 * other, directly or through others; the test also looks for such a cycle. Exempt: `mod.ts`
 * (the public API gathers every layer), `tests/` and `*_test.ts` files (test code sits
 * above every layer: a codegen test may run a kernel through `measure/`). A folder not in
 * {@link LAYERS} is an error: place it in the order first.
 *
 * One exception narrows the order: `search/` does not import `measure/` (design spaces
 * know a target's facts through `ir/target.ts`, and measurers are made above them).
 *
 * The target is one module (`ir/target.ts`): no other source file compares a value with a
 * target name (`=== "cuda"`, `case "cpu":`) nor two targets (`run.target !== target`:
 * `sameTarget`), checked by {@link targetComparisons}.
 *
 * Imports against the order today are listed in {@link ALLOWED_VIOLATIONS}; an import
 * against the order that is not listed fails, and so does a listed one that no longer
 * exists, so the list only shrinks.
 */
import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The folders each top-level folder may import (besides itself). */
const LAYERS: Record<string, readonly string[]> = (() => {
  const order = [
    ["ir"],
    ["measure", "datasets"],
    ["costmodel"],
    ["search"],
    ["rl"],
    ["network"],
    [
      "tuner",
    ],
    ["remote"],
    ["cli", "notebooks", "examples"],
    ["bench"],
  ];
  const out: Record<string, string[]> = { plots: ["ir"] };
  order.forEach((level, i) => {
    const below = order.slice(0, i).flat();
    for (const f of level) out[f] = i === 0 ? below : [...below, "plots"];
  });
  // Design spaces ask ir/target.ts for a target's facts; measurers are made above search/.
  out.search = out.search.filter((f) => f !== "measure");
  return out;
})();

/**
 * Imports against the layer order in the code today, importer -> imported (paths from the
 * repository root). The one-loop refactor of issue 14 (features for export move to
 * costmodel/, the candidate types to a lower layer, replay to measure/, the strategy table
 * to tuner/, records at the bottom) removes every one of them; delete each line as its
 * import goes. Never add one.
 */
const ALLOWED_VIOLATIONS: readonly string[] = [];

/** One import: importer and imported file, as paths from the repository root. */
interface Edge {
  from: string;
  to: string;
}

/**
 * Blanks out comments (keeping newlines, so line numbers hold) and leaves strings, so that
 * an import in a JSDoc example or a commented-out line is not read as an import.
 */
function stripComments(src: string): string {
  let out = "";
  let i = 0;
  while (i < src.length) {
    const c = src[i], d = src[i + 1];
    if (c === "/" && d === "/") {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (c === "/" && d === "*") {
      const end = src.indexOf("*/", i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < src.length && src[j] !== c && !(c !== "`" && src[j] === "\n")) {
        j += src[j] === "\\" ? 2 : 1;
      }
      out += src.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const STATIC_IMPORT =
  /(?:^|[;}\n])\s*(?:import|export)\s+(?:type\s+)?(?:[\w$*{},\s]*?\s*from\s*)?["']([^"'\n]+)["']/g;
const DYNAMIC_IMPORT = /\bimport\s*\(\s*["']([^"'\n]+)["']\s*\)/g;

/**
 * The module specifiers a TypeScript source imports or re-exports, in order of appearance
 * per kind (static first, then dynamic `import("...")` with a literal specifier).
 */
function parseImports(src: string): string[] {
  const code = stripComments(src);
  return [
    ...[...code.matchAll(STATIC_IMPORT)].map((m) => m[1]),
    ...[...code.matchAll(DYNAMIC_IMPORT)].map((m) => m[1]),
  ];
}

/** Top-level folder of a root-relative path, or `undefined` for a file at the root. */
function folderOf(path: string): string | undefined {
  const i = path.indexOf("/");
  return i < 0 ? undefined : path.slice(0, i);
}

/** Whether an importer is exempt from the order (the public API and test code). */
function exempt(path: string): boolean {
  return folderOf(path) === undefined || folderOf(path) === "tests" || path.endsWith("_test.ts");
}

/** What the order says of a set of imports. */
interface LayerReport {
  /** Imports against the order not in the allowlist, `from -> to`. */
  violations: string[];
  /** Allowlisted imports that no longer exist. */
  stale: string[];
  /** Folders outside {@link LAYERS}. */
  unknownFolders: string[];
  /** Cycles between folders through imports outside the allowlist, e.g. `a -> b -> a`. */
  cycles: string[];
}

/** Checks root-relative imports against `layers`, allowing `allowed` (`from -> to` lines). */
function checkLayers(
  edges: readonly Edge[],
  layers: Record<string, readonly string[]>,
  allowed: readonly string[],
): LayerReport {
  const found = new Set<string>();
  const unknown = new Set<string>();
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    const a = folderOf(from), b = folderOf(to);
    if (exempt(from) || a === undefined || b === undefined || a === b) continue;
    for (const f of [a, b]) if (!(f in layers)) unknown.add(f);
    const line = `${from} -> ${to}`;
    if (!layers[a]?.includes(b)) found.add(line);
    if (!allowed.includes(line)) {
      if (!graph.has(a)) graph.set(a, new Set());
      graph.get(a)!.add(b);
    }
  }
  return {
    violations: [...found].filter((l) => !allowed.includes(l)).sort(),
    stale: allowed.filter((l) => !found.has(l)),
    unknownFolders: [...unknown].sort(),
    cycles: findCycles(graph),
  };
}

/** One cycle per strongly connected component of more than one folder, as `a -> b -> a`. */
function findCycles(graph: Map<string, Set<string>>): string[] {
  const nodes = [...new Set([...graph.keys(), ...[...graph.values()].flatMap((s) => [...s])])]
    .sort();
  const reach = (from: string): Set<string> => {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length > 0) {
      for (const n of graph.get(stack.pop()!) ?? []) {
        if (!seen.has(n)) seen.add(n), stack.push(n);
      }
    }
    return seen;
  };
  const cycles: string[] = [];
  const done = new Set<string>();
  for (const n of nodes) {
    if (done.has(n) || !reach(n).has(n)) continue;
    // Shortest path back to n, breadth first, for the message.
    const prev = new Map<string, string>();
    const queue = [n];
    while (queue.length > 0 && !prev.has(n)) {
      const x = queue.shift()!;
      for (const y of [...(graph.get(x) ?? [])].sort()) {
        if (!prev.has(y)) prev.set(y, x), queue.push(y);
      }
    }
    const path = [n];
    for (let x = prev.get(n)!; x !== n; x = prev.get(x)!) path.unshift(x);
    cycles.push([n, ...path].join(" -> "));
    for (const m of nodes) if (reach(n).has(m) && reach(m).has(n)) done.add(m);
  }
  return cycles;
}

/** The module where target names may be compared. */
const TARGET_MODULE = "ir/target.ts";

const TARGET_NAME = String.raw`(["'\`])(?:cpu|cuda|opencl|replay)`;
const TARGET_COMPARISON = new RegExp(
  String.raw`[!=]==\s*${TARGET_NAME}\1|${
    TARGET_NAME.replace("(", "(?<q>")
  }\k<q>\s*[!=]==|\bcase\s+${TARGET_NAME.replace("(", "(?<c>")}\k<c>\s*:` +
    String.raw`|\.target\s*[!=]==\s*(?!undefined\b|null\b)[\w.]+`,
  "g",
);

/**
 * The comparisons of a value with a target name in a source (comments and JSDoc
 * examples left out), as `line: text`; a tfjs backend check (`getBackend() !== "cpu"`)
 * names no target and is skipped.
 */
function targetComparisons(src: string): string[] {
  const lines = stripComments(src).split("\n");
  const out: string[] = [];
  lines.forEach((line, i) => {
    if (/getBackend\(\)/.test(line)) return;
    for (const m of line.matchAll(TARGET_COMPARISON)) out.push(`${i + 1}: ${m[0]}`);
  });
  return out;
}

/** Root-relative paths of the `.ts` files and notebooks, skipping hidden folders and packages. */
async function sourceFiles(dir = ROOT): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      out.push(...await sourceFiles(path));
    } else if (e.isFile && (e.name.endsWith(".ts") || e.name.endsWith(".ipynb"))) {
      out.push(relative(ROOT, path));
    }
  }
  return out.sort();
}

/** The repository's imports between its own files, root-relative. */
async function repositoryEdges(): Promise<Edge[]> {
  const edges: Edge[] = [];
  for (const file of await sourceFiles()) {
    let src = await Deno.readTextFile(join(ROOT, file));
    if (file.endsWith(".ipynb")) {
      const nb = JSON.parse(src) as { cells: { cell_type: string; source: string | string[] }[] };
      src = nb.cells.filter((c) => c.cell_type === "code")
        .map((c) => Array.isArray(c.source) ? c.source.join("") : c.source).join("\n");
    }
    for (const spec of parseImports(src)) {
      if (!spec.startsWith("./") && !spec.startsWith("../")) continue;
      const to = relative(ROOT, resolve(ROOT, dirname(file), spec));
      if (!to.startsWith("..")) edges.push({ from: file, to });
    }
  }
  return edges;
}

function explain(r: LayerReport): string {
  return [
    ...r.unknownFolders.map((f) => `folder ${f}/ has no place in LAYERS`),
    ...r.violations.map((v) => `against the layer order: ${v}`),
    ...r.stale.map((s) => `gone, delete it from ALLOWED_VIOLATIONS: ${s}`),
    ...r.cycles.map((c) => `cycle between folders: ${c}`),
  ].join("\n");
}

Deno.test("no import goes against the layer order beyond the listed ones, none listed is gone", async () => {
  const edges = await repositoryEdges();
  assert.ok(edges.length > 500, `only ${edges.length} imports found: is the parser broken?`);
  const report = checkLayers(edges, LAYERS, ALLOWED_VIOLATIONS);
  assert.equal(explain(report), "");
});

Deno.test("parseImports reads multi-line, type-only, re-export, side-effect and dynamic imports", () => {
  const src = [
    'import assert from "node:assert/strict";',
    "import {",
    "  a,",
    "  type B,",
    '} from "../search/strategy.ts";',
    'import type { C } from "./c.ts";',
    'export * from "./d.ts";',
    'export { e as f } from "./e.ts"; import "./side.ts";',
    'const m = await import("../tuner/loop.ts");',
    "export const g = 1;",
  ].join("\n");
  assert.deepEqual(parseImports(src), [
    "node:assert/strict",
    "../search/strategy.ts",
    "./c.ts",
    "./d.ts",
    "./e.ts",
    "./side.ts",
    "../tuner/loop.ts",
  ]);
});

Deno.test("parseImports skips imports in comments and JSDoc examples, not after a glob string", () => {
  const src = [
    "/**",
    " * @example",
    ' * import { x } from "../cli/tune.ts";',
    " */",
    '// import { y } from "../cli/compare.ts";',
    'const glob = "spaces/*.json"; // a "/*" in a string opens no comment',
    'import { z } from "../tuner/loop.ts";',
    "const s = `*/`;",
  ].join("\n");
  assert.deepEqual(parseImports(src), ["../tuner/loop.ts"]);
});

Deno.test("checkLayers fails on a new import against the order and names it file -> file", () => {
  const edges: Edge[] = [
    { from: "search/random.ts", to: "ir/trace.ts" }, // down: fine
    { from: "ir/trace.ts", to: "search/space.ts" }, // up: a violation
    { from: "measure/types.ts", to: "datasets/db.ts" }, // sibling: a violation
    { from: "plots/figure.ts", to: "ir/check.ts" }, // plots sits just above ir
    { from: "plots/figure.ts", to: "search/space.ts" }, // and below everything else
    { from: "tuner/loop.ts", to: "plots/figure.ts" }, // anyone may use a leaf
    { from: "ir/trace_test.ts", to: "search/sketch.ts" }, // test code: exempt
    { from: "mod.ts", to: "cli/tune.ts" }, // the public API: exempt
  ];
  const r = checkLayers(edges, LAYERS, []);
  assert.deepEqual(r.violations, [
    "ir/trace.ts -> search/space.ts",
    "measure/types.ts -> datasets/db.ts",
    "plots/figure.ts -> search/space.ts",
  ]);
  assert.deepEqual(r.stale, []);
  assert.match(explain(r), /against the layer order: ir\/trace\.ts -> search\/space\.ts/);
});

Deno.test("checkLayers accepts a listed violation and fails once it no longer exists", () => {
  const listed = ["ir/trace.ts -> search/space.ts"];
  const still = checkLayers([{ from: "ir/trace.ts", to: "search/space.ts" }], LAYERS, listed);
  assert.deepEqual([still.violations, still.stale, still.cycles], [[], [], []]);
  const gone = checkLayers([{ from: "search/space.ts", to: "ir/trace.ts" }], LAYERS, listed);
  assert.deepEqual(gone.stale, listed);
  assert.match(explain(gone), /gone, delete it from ALLOWED_VIOLATIONS: ir\/trace\.ts/);
});

Deno.test("checkLayers reports cycles between folders and folders outside the order", () => {
  const edges: Edge[] = [
    { from: "ir/a.ts", to: "search/b.ts" },
    { from: "search/b.ts", to: "rl/c.ts" },
    { from: "rl/c.ts", to: "ir/a.ts" },
    { from: "gpu/d.ts", to: "ir/a.ts" },
  ];
  const r = checkLayers(edges, LAYERS, []);
  assert.deepEqual(r.cycles, ["ir -> search -> rl -> ir"]);
  assert.deepEqual(r.unknownFolders, ["gpu"]);
  // An allowlisted import is left out of the cycle search.
  const listed = checkLayers(edges, LAYERS, ["ir/a.ts -> search/b.ts"]);
  assert.deepEqual(listed.cycles, []);
});

Deno.test("checkLayers: search/ may not import measure/ (a target's facts come from ir/target.ts)", () => {
  const r = checkLayers(
    [
      { from: "search/templates/registry.ts", to: "measure/runner.ts" },
      { from: "search/templates/registry.ts", to: "ir/target.ts" },
      { from: "tuner/session.ts", to: "measure/replay.ts" },
    ],
    LAYERS,
    [],
  );
  assert.deepEqual(r.violations, ["search/templates/registry.ts -> measure/runner.ts"]);
});

Deno.test("targetComparisons finds a target name compared either way or as a case, not in comments", () => {
  const src = [
    'if (args.target === "cuda") x();',
    "if ('cpu' !== kind) y();",
    "switch (t) {",
    '  case "replay":',
    "}",
    '// if (target === "opencl")',
    'const name = "cuda";',
    'if (tf.getBackend() !== "cpu") throw new Error();',
    'if (mode === "cudagraph") z();',
    "if (run.target !== target) continue;",
    "if (o.target === undefined) return;",
  ].join("\n");
  assert.deepEqual(targetComparisons(src), [
    '1: === "cuda"',
    "2: 'cpu' !==",
    '4: case "replay":',
    "10: .target !== target",
  ]);
});

Deno.test("no source file outside ir/target.ts compares a value with a target name", async () => {
  const found: string[] = [];
  let scanned = 0;
  for (const file of await sourceFiles()) {
    if (!file.endsWith(".ts") || exempt(file) || file === TARGET_MODULE) continue;
    scanned++;
    const hits = targetComparisons(await Deno.readTextFile(join(ROOT, file)));
    found.push(...hits.map((h) => `${file}:${h}`));
  }
  assert.ok(scanned > 200, `only ${scanned} files scanned`);
  assert.deepEqual(found, [], "ask resolveTarget (ir/target.ts) instead of comparing names");
  // The target module itself does compare: the check would see it.
  const own = targetComparisons(await Deno.readTextFile(join(ROOT, TARGET_MODULE)));
  assert.ok(own.length > 0, "ir/target.ts compares no target name: is the pattern broken?");
});
