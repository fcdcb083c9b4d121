import assert from "node:assert/strict";
import { ROOT, SHARED_KERNEL_CACHE } from "./_cli.ts";

Deno.test("bench/finalists_tune.ts prints first and confirmed figures of a tiny tune's finalists", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "bench/finalists_tune.ts",
        ...["--shape", "16,16,16", "--trials", "4", "--finalists", "2", "--rounds", "2"],
        ...["--db", `${dir}/r.db`],
      ],
      cwd: ROOT,
      env: SHARED_KERNEL_CACHE,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const s = JSON.parse(text.trim().split("\n").at(-1)!);
    assert.equal(s.trials, 4);
    assert.equal(s.finalists.length, 2);
    for (const f of s.finalists) {
      assert.equal(f.rounds.length, 2);
      assert.ok(f.first > 0 && f.confirmed > 0);
    }
    assert.equal(s.best_gflops, s.confirmed_gflops);
    assert.equal(s.confirmed_gflops, s.finalists[0].confirmed);
    assert.match(text, /trial \| first GFLOP\/s \| rounds GFLOP\/s \| confirmed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
