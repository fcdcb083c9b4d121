import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const BENCH = fileURLToPath(new URL("../bench/gpu_peers.ts", import.meta.url));

Deno.test("bench/gpu_peers.ts says there is no GPU and exits 0, or prints cuBLAS beside tunebook", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BENCH, "--sizes", "256", "--repeat", "2", "--min-repeat-ms", "1"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  if (stdout.startsWith("no GPU: ")) {
    assert.match(stdout, /^no GPU: no CUDA (driver|device).*; nothing measured\n$/);
  } else {
    assert.match(stdout, /^\| workload \| tunebook best \| cuBLAS FP32 /);
    assert.match(stdout, /^\| matmul:256,256,256 \| none \| /m);
  }
  const bad = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BENCH, "--sizes", "abc"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(bad.code, 2);
  assert.match(new TextDecoder().decode(bad.stderr), /^gpu_peers: --sizes takes integers/);
});
