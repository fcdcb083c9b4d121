/**
 * Every script of examples/ runs as a user outside the repository runs it: copied into a temporary
 * folder outside the clone, its `"../mod.ts"` (and `"../<folder>/mod.ts"`) imports replaced by the
 * clone's modules as file URLs (the "import by path" the examples' headers describe), and run there
 * with `--no-config`, so that our deno.json plays no part. Each must exit 0 and leave what it says it writes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const EXAMPLES = join(ROOT, "examples");
const ROOT_URL = pathToFileURL(join(ROOT, "/")).href;

/** Copies an example outside the clone and runs it there; returns its stdout. */
async function runOutside(name: string, env: Record<string, string> = {}): Promise<{
  dir: string;
  stdout: string;
}> {
  const dir = await Deno.makeTempDir({ prefix: "tunebook-example-" });
  assert.ok(!dir.startsWith(ROOT), `${dir} must lie outside the clone ${ROOT}`);
  const source = await Deno.readTextFile(join(EXAMPLES, name));
  assert.ok(source.includes(`from "../mod.ts"`), `${name} imports ../mod.ts`);
  const script = join(dir, name);
  const byUrl = source.replace(
    /from "\.\.\/((?:[a-z]+\/)?mod\.ts)"/g,
    (_, path) => `from "${ROOT_URL}${path}"`,
  );
  assert.ok(!byUrl.includes(`from "../`), `${name} imports only mod.ts files of the clone`);
  await Deno.writeTextFile(script, byUrl);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-config", "-A", script, dir],
    cwd: dir,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, `${name} exited ${out.code}:\n${stdout}\n${stderr}`);
  return { dir, stdout };
}

const examples = [...Deno.readDirSync(EXAMPLES)].filter((e) => e.name.endsWith(".ts"))
  .map((e) => e.name).sort();

Deno.test("examples/ holds the five scripts this test runs", () => {
  assert.deepEqual(examples, [
    "compare_replay.ts",
    "export_and_train.ts",
    "own_strategy.ts",
    "own_workload.ts",
    "tune_matmul.ts",
  ]);
});

Deno.test("examples/tune_matmul.ts tunes matmul 64 and plots it", async () => {
  const { dir, stdout } = await runOutside("tune_matmul.ts", { TUNEBOOK_TRIALS: "4" });
  assert.match(stdout, /best \d+\.\d\d GFLOP\/s after 4 trials/);
  assert.match(await Deno.readTextFile(join(dir, "tune_matmul.svg")), /^<svg[\s\S]*<path/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("examples/compare_replay.ts compares three strategies on pnpoly", async () => {
  const { dir, stdout } = await runOutside("compare_replay.ts");
  for (const s of ["random", "sa", "bo"]) {
    for (const b of [25, 50]) {
      const m = stdout.match(new RegExp(`^${s} +budget ${b}: (\\d\\.\\d{3})$`, "m"));
      assert.ok(m, `no row for ${s} at ${b} in:\n${stdout}`);
      const f = Number(m[1]);
      assert.ok(f > 0 && f <= 1, `${s} at ${b}: fraction ${f}`);
    }
  }
  assert.match(await Deno.readTextFile(join(dir, "compare.svg")), /^<svg/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("examples/own_workload.ts samples, lowers and compiles its own expression", async () => {
  const { dir, stdout } = await runOutside("own_workload.ts");
  assert.match(stdout, /^y\[0\.\.3\] = /m);
  assert.match(stdout, /a schedule of sketch /);
  const compiled = stdout.match(/^sketch .*: \d+ lines of C, compiled$/gm) ?? [];
  assert.ok(compiled.length >= 1, stdout);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("examples/own_strategy.ts runs its hill climber through ask/tell", async () => {
  const { dir, stdout } = await runOutside("own_strategy.ts");
  for (const s of ["hill-climber", "random"]) {
    assert.match(stdout, new RegExp(`^${s} +budget 50: \\d\\.\\d{3}$`, "m"), stdout);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("examples/export_and_train.ts exports pnpoly and ranks held-out rows", async () => {
  const { dir, stdout } = await runOutside("export_and_train.ts");
  const rows = Number(stdout.match(/exported (\d+) rows/)?.[1]);
  assert.ok(rows > 0, stdout);
  const lines = (await Deno.readTextFile(join(dir, "pnpoly.jsonl"))).trim().split("\n");
  assert.equal(lines.length, rows);
  const tau = Number(stdout.match(/Kendall tau (-?\d\.\d{3})/)?.[1]);
  assert.ok(tau > 0, `a model that ranks no better than chance: tau ${tau}\n${stdout}`);
  await Deno.remove(dir, { recursive: true });
});
