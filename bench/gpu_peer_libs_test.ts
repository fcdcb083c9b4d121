import assert from "node:assert/strict";
import { join } from "node:path";
import { CUDNN, findLibrary, resnet18Convs } from "./gpu_peer_libs.ts";

Deno.test("findLibrary takes the given path first, then the environment variable, and skips missing files", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tb-peerlib-" });
  try {
    const given = join(dir, "given.so"), env = join(dir, "env.so");
    await Deno.writeTextFile(given, "");
    await Deno.writeTextFile(env, "");
    Deno.env.set(CUDNN.env, env);
    assert.equal(findLibrary(CUDNN, given), given);
    assert.equal(findLibrary(CUDNN, join(dir, "missing.so")), env);
    Deno.env.delete(CUDNN.env);
    const found = findLibrary(CUDNN, join(dir, "missing.so"));
    // Otherwise a soname from a library folder or a wheel, or nothing on a machine without cuDNN.
    assert.ok(found === undefined || /libcudnn\.so(\.\d+)?$/.test(found), found ?? "");
  } finally {
    Deno.env.delete(CUDNN.env);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resnet18Convs lists ResNet-18's eleven distinct convolutions, stem first", () => {
  const convs = resnet18Convs();
  assert.equal(convs.length, 11);
  assert.deepEqual(convs[0].shape, [1, 3, 224, 224, 64, 7, 7, 2, 3]);
  assert.deepEqual(convs[1].shape, [1, 64, 56, 56, 64, 3, 3, 1, 1]);
  assert.ok(convs.every((w) => w.name === "conv2d"));
});
