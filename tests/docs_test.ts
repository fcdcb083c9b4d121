/**
 * The manual holds what it promises: README.md is one screen with the two commands; README.md and
 * docs/ carry no dated measurements; every relative link of the manual, examples/ and
 * bench/results/ resolves; every shell line of README.md and docs/ names a task of deno.json, a
 * file or a script that exists, and only flags that the command's own `--help` (its argument
 * parser's usage) lists; docs/datasets.md lists every export column and format; every study of
 * bench/results/ heads with its command, commit, machine and date, the commit one of this
 * repository; LICENSE and CITATION.cff agree with deno.json; `deno doc --lint` of the ten public
 * modules is clean, and the test command and `deno task docs` name all ten; the root module keeps
 * at most 70 names. (The TypeScript blocks of README.md and
 * docs/ are type-checked and run by `deno test --doc`, which the test command runs on every
 * Markdown file.)
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { EXPORT_SCHEMA } from "../datasets/export_rows.ts";
import { EXPORT_FORMATS } from "../datasets/formats/registry.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const read = (path: string) => Deno.readTextFileSync(join(ROOT, path));
const mdFiles = (dir: string) =>
  [...Deno.readDirSync(join(ROOT, dir))].filter((e) => e.isFile && e.name.endsWith(".md"))
    .map((e) => join(dir, e.name)).sort();
const MANUAL = ["README.md", ...mdFiles("docs")];
const TASKS: Record<string, string> = JSON.parse(read("deno.json")).tasks;

/** The fenced code blocks of a Markdown text, with their info strings. */
export function codeBlocks(md: string): { lang: string; body: string }[] {
  const out: { lang: string; body: string }[] = [];
  const re = /^```([^\n]*)\n([\s\S]*?)^```\s*$/gm;
  for (const m of md.matchAll(re)) out.push({ lang: m[1].trim(), body: m[2] });
  return out;
}

/** Shell lines of a block: continuations joined, comments dropped, split at ; && || | &. */
export function shellCommands(body: string): string[] {
  const joined = body.replace(/\\\n\s*/g, " ");
  return joined.split("\n").flatMap((line) =>
    line.replace(/(^|\s)#.*$/, "").split(/\s*(?:;|&&|\|\||\||&(?!\d))\s*/)
  ).map((s) => s.trim().replace(/\s+/g, " ")).filter((s) => s.length > 0);
}

/** Splits a command line into words (quotes removed, no expansion). */
function words(cmd: string): string[] {
  return [...cmd.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

const helpCache = new Map<string, string>();
async function helpOf(task: string): Promise<string> {
  if (!helpCache.has(task)) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "-q", task, "--help"],
      cwd: ROOT,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, `deno task ${task} --help exited ${out.code}`);
    assert.match(text, /usage:/, `deno task ${task} --help printed no usage`);
    helpCache.set(task, text);
  }
  return helpCache.get(task)!;
}

/** Problems with one shell command of the manual (empty when it would run as written). */
async function checkCommand(cmd: string): Promise<string[]> {
  const w = words(cmd).filter((x) => !/^[A-Z_]+=/.test(x)); // env assignments go first
  const problems: string[] = [];
  const deno = w.findIndex((x) => x === "deno" || x.endsWith("/.bin/deno"));
  if (deno >= 0 && w[deno + 1] === "task") {
    const task = w[deno + 2];
    if (!(task in TASKS)) return [`deno task ${task}: no such task in deno.json`];
    const help = await helpOf(task);
    for (const flag of w.slice(deno + 3).filter((x) => x.startsWith("--"))) {
      const name = flag.split("=")[0];
      if (!new RegExp(`(^|[\\s\\[,|(])${name}(?![\\w-])`, "m").test(help)) {
        problems.push(`deno task ${task}: ${name} is not in its --help`);
      }
    }
  } else if (deno >= 0 && w[deno + 1] === "run") {
    const file = w.slice(deno + 2).find((x) => !x.startsWith("-"));
    if (file && !existsSync(join(ROOT, file))) problems.push(`deno run ${file}: no such file`);
  } else if (w[0] === "bash" && w[1]?.endsWith(".sh")) {
    if (!existsSync(join(ROOT, w[1]))) problems.push(`bash ${w[1]}: no such script`);
  }
  for (const x of w.filter((x) => /^notebooks\/.*\.ipynb$/.test(x))) {
    if (!existsSync(join(ROOT, x))) problems.push(`${x}: no such notebook`);
  }
  return problems;
}

Deno.test("README.md is at most 250 lines and keeps the two commands", () => {
  const readme = read("README.md");
  assert.ok(readme.split("\n").length <= 250, `README.md has ${readme.split("\n").length} lines`);
  assert.match(readme, /^bash scripts\/main\.sh /m);
  assert.match(readme, /^bash scripts\/test\.sh /m);
});

Deno.test("README.md and docs/ hold no dated measurements", () => {
  for (const file of MANUAL) {
    const text = read(file);
    const stamp = text.match(/\b\d{1,2}:\d{2}(?:-\d{1,2}:\d{2})? UTC\b|\b20\d\d-\d\d-\d\d\b/);
    assert.equal(stamp, null, `${file} holds a dated figure: ${stamp?.[0]}`);
  }
});

Deno.test("every relative link of the manual, examples/ and bench/results/ resolves", () => {
  const files = [...MANUAL, ...mdFiles("examples"), ...mdFiles("bench/results")];
  const broken: string[] = [];
  for (const file of files) {
    for (const m of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1].split("#")[0];
      if (target === "" || /^[a-z]+:/.test(target)) continue;
      if (!existsSync(join(ROOT, dirname(file), target))) broken.push(`${file}: ${m[1]}`);
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("the shell checker finds a wrong task, flag and file", async () => {
  assert.deepEqual(await checkCommand("deno task nope --x"), [
    "deno task nope: no such task in deno.json",
  ]);
  assert.deepEqual(await checkCommand("deno task export --db a.db --bogus-flag 1"), [
    "deno task export: --bogus-flag is not in its --help",
  ]);
  assert.deepEqual(await checkCommand("deno run -A bench/nope.ts"), [
    "deno run bench/nope.ts: no such file",
  ]);
  assert.deepEqual(await checkCommand("deno task export --db a.db --format csv --out a.csv"), []);
  assert.deepEqual(
    shellCommands("a --x \\\n  --y 1 # note\nb & c; d"),
    ["a --x --y 1", "b", "c", "d"],
  );
});

Deno.test("every shell line of README.md and docs/ names what exists, with flags it takes", async () => {
  const problems: string[] = [];
  let checked = 0;
  for (const file of MANUAL) {
    for (const block of codeBlocks(read(file)).filter((b) => /^(sh|bash|shell)\b/.test(b.lang))) {
      for (const cmd of shellCommands(block.body)) {
        checked++;
        for (const p of await checkCommand(cmd)) problems.push(`${file}: ${p}\n  ${cmd}`);
      }
    }
  }
  assert.ok(checked >= 20, `only ${checked} shell commands found`);
  assert.deepEqual(problems, []);
});

Deno.test("docs/datasets.md lists every export column in order, and every format", () => {
  const text = read("docs/datasets.md");
  const rows = [...text.matchAll(/^\| `([a-z0-9_]+)` +\| (\w+)(\?)? +\|/gm)];
  assert.deepEqual(
    rows.map((m) => [m[1], m[2], m[3] === "?"]),
    EXPORT_SCHEMA.map((c) => [c.name, c.type, c.nullable]),
  );
  for (const f of EXPORT_FORMATS) assert.match(text, new RegExp(`\\(\`${f}\`[;,)]`), f);
});

Deno.test("every study of bench/results/ heads with command, commit, machine and date", async () => {
  const studies = mdFiles("bench/results").filter((f) => !f.endsWith("README.md"));
  assert.ok(studies.length >= 20, `${studies.length} studies`);
  const index = read("bench/results/README.md");
  for (const file of studies) {
    const head = read(file).split("\n").slice(0, 14).join("\n");
    for (const field of ["command", "commit", "machine", "date"]) {
      assert.match(head, new RegExp(`^\\| ${field} +\\| \\S`, "m"), `${file}: no ${field}`);
    }
    const commits = [...head.matchAll(/^\| commit .*$/gm)][0][0].match(/`([0-9a-f]{7,40})`/g) ?? [];
    assert.ok(commits.length > 0, `${file}: no commit hash`);
    for (const c of commits) {
      const out = await new Deno.Command("git", {
        args: ["cat-file", "-e", `${c.replaceAll("`", "")}^{commit}`],
        cwd: ROOT,
        stderr: "null",
      }).output();
      assert.ok(out.success, `${file}: ${c} is not a commit of this repository`);
    }
    assert.ok(index.includes(`(${relative("bench/results", file)})`), `${file} is not indexed`);
  }
});

Deno.test("LICENSE is MIT and CITATION.cff carries deno.json's version", () => {
  assert.match(read("LICENSE"), /^MIT License\n\nCopyright \(c\) \d{4} The tunebook developers\n/);
  const cff = read("CITATION.cff");
  const version = JSON.parse(read("deno.json")).version;
  assert.match(cff, /^cff-version: 1\.2\.0$/m);
  assert.match(cff, new RegExp(`^version: "${version.replaceAll(".", "\\.")}"$`, "m"));
  assert.match(cff, /^ {2}- name: "The tunebook developers"$/m);
  assert.match(cff, /^license: MIT$/m);
  for (const key of ["message", "title", "authors", "references"]) {
    assert.match(cff, new RegExp(`^${key}:`, "m"), key);
  }
  // Every reference has the keys CFF 1.2.0 requires of one: type, title and authors.
  const refs = cff.split(/^references:$/m)[1].split(/^ {2}- type: /m).slice(1);
  assert.ok(refs.length >= 5);
  for (const r of refs) {
    assert.match(r, /^ {4}title: /m);
    assert.match(r, /^ {4}authors:\n {6}- /m);
  }
});

/** The public modules: deno.json "exports", in its order (the root `mod.ts` first). */
const PUBLIC_MODULES: string[] = Object.values(
  JSON.parse(read("deno.json")).exports as Record<string, string>,
).map((p) => p.replace(/^\.\//, ""));

Deno.test("deno doc --lint of the ten public modules together is clean", async () => {
  // Together: a type a signature of one module names may be exported by another (the root's
  // `tune` names TuneOptions, which tuner/mod.ts exports), as a reader of the reference sees it.
  assert.equal(PUBLIC_MODULES.length, 10, PUBLIC_MODULES.join(" "));
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--lint", ...PUBLIC_MODULES],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  const findings = [...text.matchAll(/^error\[([a-z-]+)\]: ([^\n]*)\n\s*--> ([^\n]+)/gm)].map((m) =>
    `${m[1]} ${m[3].replace(ROOT, "")}: ${m[2]}`
  );
  assert.deepEqual(findings, []);
  assert.equal(out.code, 0, text);
});

Deno.test("the test command and `deno task docs` cover the ten public modules", () => {
  const list = PUBLIC_MODULES.join(" ");
  assert.match(read("scripts/test.sh"), new RegExp(`^"\\$DENO" doc --lint ${list}$`, "m"));
  assert.match(TASKS.docs, new RegExp(`^deno doc --html .*--output=docs/api ${list}$`));
});

Deno.test("the root module exports at most 70 names", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", "mod.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.equal(out.code, 0);
  const nodes = Object.values(JSON.parse(new TextDecoder().decode(out.stdout)).nodes) as {
    symbols: { name: string }[];
  }[];
  const names = new Set(nodes.flatMap((n) => n.symbols.map((s) => s.name)));
  assert.ok(names.size > 0 && names.size <= 70, `mod.ts exports ${names.size} names`);
});
