/**
 * The peers' harness (`bench/peers/gpu_cublas.cu`) builds with nvcc alone (no
 * cuBLAS or cuDNN headers: the libraries are loaded with dlopen) and exports
 * every entry point `bench/gpu_peers.ts` calls; a library that does not load
 * is a message, not a crash. Needs nvcc, not a GPU; skipped without nvcc.
 */
import assert from "node:assert/strict";
import { HARNESS, PEER_SYMBOLS, peerWorkloads } from "../bench/gpu_peers.ts";
import { createNvccBuilder, nvccVersion } from "../measure/nvcc_builder.ts";

const nvcc = Deno.env.get("NVCC") ?? "nvcc";
const hasNvcc = await nvccVersion(nvcc).then(() => true, () => false);

Deno.test({
  name: "the cuBLAS/cuDNN harness compiles with nvcc and exports every symbol gpu_peers.ts calls",
  ignore: !hasNvcc,
  async fn() {
    const cacheDir = await Deno.makeTempDir({ prefix: "tb-peers-" });
    try {
      const [b] = await createNvccBuilder({ cacheDir }).build([
        { source: await Deno.readTextFile(HARNESS) },
      ]);
      assert.equal(b.errorKind, "none", b.error ?? "");
      // dlopen resolves every symbol of PEER_SYMBOLS or throws; no driver is needed to load it.
      const lib = Deno.dlopen(b.artifact!, PEER_SYMBOLS);
      try {
        const path = new TextEncoder().encode("/nonexistent/libcudnn.so.9\0");
        assert.equal(lib.symbols.tb_cudnn_version(path), 0n);
        const said = new Deno.UnsafePointerView(lib.symbols.tb_peer_message()!).getCString();
        assert.match(said, /^dlopen \/nonexistent\/libcudnn\.so\.9: /);
      } finally {
        lib.close();
      }
    } finally {
      await Deno.remove(cacheDir, { recursive: true });
    }
  },
});

Deno.test("peerWorkloads: matmul sizes, then dense with bias and ReLU, then the convolutions asked", () => {
  const keys = (o: { sizes: string; dense: string; convs: string }) =>
    peerWorkloads(o).map((w) => `${w.name}:${w.shape.join(",")}`);
  assert.deepEqual(keys({ sizes: "1024,4096", dense: "1024,1024,1024", convs: "conv2" }), [
    "matmul:1024,1024,1024",
    "matmul:4096,4096,4096",
    "dense:1024,1024,1024",
    "conv2d:1,64,56,56,64,3,3,1,1",
  ]);
  const all = keys({ sizes: "64", dense: "none", convs: "resnet18" });
  assert.equal(all.length, 1 + 11);
  assert.ok(all.includes("conv2d:1,3,224,224,64,7,7,2,3"));
  assert.ok(all.includes("conv2d:1,256,14,14,512,1,1,2,0"));
  assert.throws(() => keys({ sizes: "0", dense: "none", convs: "none" }), /--sizes takes/);
});
