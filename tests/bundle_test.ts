/**
 * `bash scripts/bundle.sh`: the archive unpacked in a fresh directory runs
 * `tune --target cuda` inside a network namespace with no network, with no
 * `deno` on PATH, and builds and records its candidates (exit 3 without a
 * GPU, 0 with one). Compressed with `xz -0` here to save time; the 40 MiB cap
 * holds for the default `xz -9`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const dec = new TextDecoder();

/** PATH without any directory that holds a `deno`. */
function pathWithoutDeno(): string {
  return (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":").filter((d) => {
    try {
      Deno.statSync(join(d, "deno"));
      return false;
    } catch {
      return true;
    }
  }).join(":");
}

/** The first of `unshare -rn` / `unshare -n` that works here. */
async function offlinePrefix(): Promise<string[]> {
  for (const args of [["-rn"], ["-n"]]) {
    const r = await new Deno.Command("unshare", { args: [...args, "true"], stderr: "null" })
      .output().catch(() => undefined);
    if (r?.success) return ["unshare", ...args];
  }
  throw new Error("this test needs a network namespace (unshare -rn, or unshare -n as root)");
}

Deno.test("the offline bundle runs tune --target cuda with no network and no deno on PATH", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-bundle-" });
  try {
    const archive = join(dir, "tb.tar.xz");
    const made = await new Deno.Command("bash", {
      args: [join(ROOT, "scripts/bundle.sh"), archive],
      env: { BUNDLE_XZ_LEVEL: "0", BUNDLE_MAX_BYTES: String(200 * 1024 * 1024) },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(made.success, dec.decode(made.stderr));
    const unpack = await new Deno.Command("tar", { args: ["-C", dir, "-xJf", archive] }).output();
    assert.ok(unpack.success);
    const prefix = await offlinePrefix();
    const db = join(dir, "r.db");
    const out = await new Deno.Command(prefix[0], {
      args: [
        ...prefix.slice(1),
        join(dir, "tunebook/tune"),
        ...["--target", "cuda", "--workload", "matmul", "--shape", "32,32,32"],
        ...["--trials", "2", "--db", db],
      ],
      cwd: dir,
      clearEnv: true,
      env: { PATH: pathWithoutDeno(), HOME: dir },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = dec.decode(out.stderr);
    assert.ok([0, 3].includes(out.code), `exit ${out.code}: ${stderr}`);
    assert.equal(stderr.match(/^nvcc #\d+: tb_k0 \d+ regs/gm)?.length, 2, stderr);
    const line = JSON.parse(dec.decode(out.stdout));
    assert.deepEqual([line.target, line.trials], ["cuda", 2]);
    if (out.code === 3) assert.match(stderr, /^tune: no CUDA (driver|device)/m);
    // scripts/gpu_session.sh given the archive unpacks it and runs its stages with the bundle's
    // deno, offline (probing the device; with a GPU only a dry run, which tunes nothing).
    const work = join(dir, "session");
    const session = await new Deno.Command(prefix[0], {
      args: [
        ...prefix.slice(1),
        ...["bash", join(ROOT, "scripts/gpu_session.sh"), "--bundle", archive],
        ...["--work", work, "--stage", "peers,conv", ...(out.code === 0 ? ["--dry-run"] : [])],
      ],
      clearEnv: true,
      env: { PATH: pathWithoutDeno(), HOME: dir },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const said = dec.decode(session.stderr);
    assert.equal(session.code, 0, said);
    assert.match(
      said,
      /^gpu_session: deno: \S*\/session\/bundle\/tunebook\/bin\/deno \(--cached-only\)/m,
    );
    if (out.code === 3) assert.match(said, /^gpu_session: conv: no GPU \(no CUDA (driver|device)/m);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
