/**
 * Abuse tests of the tasks' permissions (issue 41, item 9): every `deno
 * task` that runs a command grants scoped reads, writes, programs (but for
 * tune and reproduce, whose CUDA worker Deno starts with LD_LIBRARY_PATH only
 * under an unscoped --allow-run) and system information (not `-A` in
 * effect), the network only where a queue or database URL is taken; the tasks still work (`--help` and a small real
 * run through `deno task`), and a path outside what they grant exits 2 with
 * one line naming it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT, SHARED_KERNEL_CACHE } from "./_cli.ts";

const TASKS = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks as Record<
  string,
  string
>;
/** The tasks that run a command (not `test` or `check`). */
const COMMANDS = Object.keys(TASKS).filter((t) => TASKS[t].startsWith("deno run "));
/** The tasks whose commands take a queue or database URL. */
const NETWORKED = new Set(["tune", "compare", "worker", "export", "report", "reproduce"]);

/** The value of `--allow-NAME` in a task: undefined when absent, "" when unscoped. */
function grant(task: string, name: string): string | undefined {
  const m = new RegExp(`--allow-${name}(=(\\S+))?(\\s|$)`).exec(TASKS[task]);
  return m ? (m[2] ?? "") : undefined;
}

function onPath(name: string): boolean {
  return (Deno.env.get("PATH") ?? "").split(":").some((d) => {
    try {
      return d !== "" && Deno.statSync(join(d, name)).isFile;
    } catch {
      return false;
    }
  });
}

async function task(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "--config", join(ROOT, "deno.json"), ...args],
    env: { ...SHARED_KERNEL_CACHE, ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("every command task scopes reads, writes, programs and system information; the network only with URLs", () => {
  assert.ok(COMMANDS.length >= 9, COMMANDS.join(","));
  for (const t of COMMANDS) {
    assert.ok(!/(^|\s)(-A|--allow-all)(\s|$)/.test(TASKS[t]), `${t}: -A`);
    for (const name of ["read", "write", "sys"]) {
      assert.ok(grant(t, name) !== "", `${t}: --allow-${name} unscoped`);
    }
    const run = grant(t, "run");
    // tune and reproduce start the CUDA worker with LD_LIBRARY_PATH set, which Deno allows
    // only with an unscoped --allow-run.
    if (t === "tune" || t === "reproduce") assert.equal(run, "", `${t}: --allow-run`);
    else assert.ok(run !== "", `${t}: --allow-run unscoped`);
    if (run) {
      assert.match(run, /(^|,)gcc(,|$)/, `${t}: no gcc`);
      // Workers are the running deno binary, by its resolved path (a PATH name would not match).
      assert.match(
        TASKS[t],
        /--allow-run=\S*"\$\(deno eval --quiet 'console\.log\(Deno\.execPath\(\)\)'\)"/,
        `${t}: workers need the deno binary`,
      );
    }
    assert.equal(grant(t, "net") !== undefined, NETWORKED.has(t), `${t}: --allow-net`);
    const write = grant(t, "write");
    if (write !== undefined) assert.deepEqual(write.split(",").sort(), [".", "/tmp"], t);
  }
  // Commands that neither build nor run kernels get no programs and no FFI.
  for (const t of ["export", "report"]) {
    assert.equal(grant(t, "run"), undefined, t);
    assert.equal(grant(t, "ffi"), undefined, t);
  }
});

Deno.test("the scoped tasks run: --help for each, a small tune, export and report", async () => {
  for (const t of COMMANDS) {
    const r = await task([t, "--help"]);
    assert.equal(r.code, 0, `${t}: ${r.stderr}`);
    assert.match(r.stdout, /^usage: deno task /, t);
  }
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "tunebook-perm-" });
  try {
    const db = join(dir, "runs.db");
    const tuned = await task([
      "tune",
      ...["--workload", "matmul", "--shape", "16,16,16", "--trials", "2", "--repeat", "1"],
      ...["--min-repeat-ms", "0", "--quiet", "--db", db],
    ]);
    assert.equal(tuned.code, 0, tuned.stderr);
    assert.equal(JSON.parse(tuned.stdout).valid, 2, tuned.stdout);
    const exported = await task([
      "export",
      ...["--db", db, "--format", "csv", "--out", join(dir, "r.csv")],
    ]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.equal(JSON.parse(exported.stdout).rows, 2);
    const report = await task(["report", "--db", db, "--out", join(dir, "rep")]);
    assert.equal(report.code, 0, report.stderr);
    if (onPath("nvcc")) {
      // nvcc and the CUDA worker (started with LD_LIBRARY_PATH): 0 with a GPU, 3 without.
      const cuda = await task([
        "tune",
        ...["--workload", "matmul", "--shape", "64,64,64", "--target", "cuda", "--trials", "1"],
        ...["--quiet", "--db", join(dir, "cuda.db")],
      ]);
      assert.ok(cuda.code === 0 || cuda.code === 3, `exit ${cuda.code}: ${cuda.stderr}`);
      assert.doesNotMatch(cuda.stderr, /Requires|NotCapable/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the scoped tune-network task runs a network to its summary (the OpenMP runtime pinned under its --allow-env)", async () => {
  const dir = await Deno.makeTempDir({ dir: "/tmp", prefix: "tunebook-perm-net-" });
  try {
    // Before 2026-12-02 the task's --allow-env refused KMP_INIT_AT_FORK, the OpenMP runtime was
    // then never pinned nor paused, and the process died of SIGSEGV (139) as its kernels closed.
    const r = await task([
      "tune-network",
      ...["--network", "resnet18", "--size", "32", "--trials", "12", "--repeat", "1"],
      ...["--quiet", "--db", join(dir, "n.db"), "--plot", join(dir, "n.svg")],
    ]);
    assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr.slice(-500)}`);
    const summary = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    assert.equal(summary.sessions[0].measured.matchesReference, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a path outside what a task grants exits 2 with one line naming it", async () => {
  // /var/tmp: outside the repository and /tmp.
  const dir = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "tunebook-perm-" });
  try {
    const cases: [string[], RegExp][] = [
      [
        ["export", "--db", join(dir, "runs.db"), "--format", "csv", "--out", "/tmp/x.csv"],
        /^export: Requires read access to ".*runs\.db": the deno task reads and writes only/,
      ],
      [
        ["report", "--db", join(dir, "runs.db")],
        /^report: Requires read access to ".*runs\.db"/,
      ],
      [
        [
          "tune",
          "--workload",
          "matmul",
          "--shape",
          "16,16,16",
          "--quiet",
          "--db",
          join(dir, "n.db"),
        ],
        /^tune: .*Requires (read|write) access to ".*tunebook-perm-[^"]*"/,
      ],
    ];
    for (const [args, pattern] of cases) {
      const r = await task(args);
      assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], pattern);
      assert.doesNotMatch(r.stderr, /^\s+at /m);
    }
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing written outside the grant");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
