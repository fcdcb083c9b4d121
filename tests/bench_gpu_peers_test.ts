import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const BENCH = fileURLToPath(new URL("../bench/gpu_peers.ts", import.meta.url));
const dec = new TextDecoder();

async function bench(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BENCH, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("bench/gpu_peers.ts says there is no GPU and exits 0, or prints cuBLAS and cuDNN beside tunebook", async () => {
  const r = await bench([
    ...["--sizes", "256", "--dense", "64,64,64", "--convs", "conv2"],
    ...["--repeat", "2", "--min-repeat-ms", "1"],
  ]);
  assert.equal(r.code, 0, r.stderr);
  if (r.stdout.startsWith("no GPU: ")) {
    assert.match(r.stdout, /^no GPU: no CUDA (driver|device).*; nothing measured\n$/);
  } else {
    assert.match(r.stdout, /^\| workload \| peer \| tunebook best \| peer FP32 /);
    assert.match(r.stdout, /^\| matmul:256,256,256 \| cuBLAS \| none \| /m);
    assert.match(r.stdout, /^\| dense:64,64,64 \| cuBLAS \| none \| /m);
    assert.match(r.stdout, /^\| conv2d:1,64,56,56,64,3,3,1,1 \| cuDNN \| none \| /m);
    const json = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    assert.equal(json.rows.length, 3);
  }
});

Deno.test("bench/gpu_peers.ts refuses bad sizes, shapes, convolutions and databases with exit 2", async () => {
  for (
    const [args, why] of [
      [["--sizes", "abc"], /^gpu_peers: --sizes takes some integers in 1\.\.16384/],
      [["--dense", "64,64"], /^gpu_peers: --dense takes 3 integers/],
      [["--convs", "vgg"], /^gpu_peers: --convs takes resnet18, conv2 or none, got "vgg"/],
      [["--db", "/nonexistent/x.db"], /^gpu_peers: --db \/nonexistent\/x\.db: no such file/],
      [["--repeat", "0"], /^gpu_peers: --repeat takes an integer >= 1/],
    ] as const
  ) {
    const r = await bench([...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, why);
  }
});
