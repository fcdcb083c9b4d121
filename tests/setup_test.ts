/**
 * scripts/setup.sh is sized to the job: the main job's setup (main.sh: `setup.sh main`)
 * installs what the matmul study uses, the test command (`setup.sh test`) every group; each
 * group says what it installs and why, and a run with everything present installs nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "./_cli.ts";

async function setup(args: string[]) {
  const out = await new Deno.Command("bash", {
    args: [join(ROOT, "scripts", "setup.sh"), ...args],
    env: { CI: "true" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** The packages of a group, as setup.sh lists them. */
function groupPackages(script: string, group: string): string[] {
  const m = script.match(new RegExp(`\\[${group}\\]="([^"]*)"`));
  assert.ok(m, `group ${group} in setup.sh`);
  return m[1].split(/\s+/).filter(Boolean);
}

Deno.test("the main job installs what the study uses; the test command every group", async () => {
  const script = await Deno.readTextFile(join(ROOT, "scripts", "setup.sh"));
  const main = groupPackages(script, "main");
  for (const p of ["gcc", "libgomp1", "libxgboost-dev"]) assert.ok(main.includes(p), p);
  for (
    const p of ["python3-torch", "postgresql", "redis-server", "libhalide14-0-dev", "chromium"]
  ) {
    assert.ok(!main.includes(p), `${p} is not the main job's`);
  }
  assert.ok(groupPackages(script, "torch").includes("python3-torch"));
  assert.ok(groupPackages(script, "distributed").includes("redis-server"));
  assert.ok(groupPackages(script, "browser").includes("chromium"));
  assert.match(await Deno.readTextFile(join(ROOT, "scripts", "main.sh")), /setup\.sh main\n/);
  assert.match(await Deno.readTextFile(join(ROOT, "scripts", "test.sh")), /setup\.sh test\n/);
});

Deno.test("setup.sh refuses an unknown group, and installs nothing a group already has", async () => {
  const bad = await setup(["bogus"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown group "bogus"; known: main .*torch.*, test/);
  // Here every group is installed (scripts/setup.sh test was run): nothing to install.
  const script = await Deno.readTextFile(join(ROOT, "scripts", "setup.sh"));
  const installed = async (p: string) =>
    (await new Deno.Command("dpkg", { args: ["-s", p], stdout: "null", stderr: "null" }).output())
      .success;
  const torch = groupPackages(script, "torch");
  if (!(await Promise.all(torch.map(installed))).every(Boolean)) {
    console.log("setup_test: PyTorch is not installed here; the skip check is not run");
    return;
  }
  const r = await setup(["torch"]);
  assert.equal(r.code, 0, r.stderr);
  for (const p of torch) assert.match(r.stdout, new RegExp(`skip: apt package ${p} already`));
  assert.doesNotMatch(r.stdout, /install \(/);
  assert.doesNotMatch(r.stdout, /postgresql|redis|deno install/, "only the group asked for");
  assert.match(r.stdout, /done \(torch\)/);
});
