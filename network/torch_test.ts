/**
 * The ONNX importer and the executor against PyTorch (skipped unless
 * a Python imports torch and torchvision: Debian's python3-torch and
 * python3-torchvision): a tiny model and torchvision's ResNet-18 with random
 * weights are exported with `torch.onnx.export` (network/_torch_export.py);
 * the imported ResNet-18 has the built-in one's task list, and both run
 * natively to PyTorch's output on the same input.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { builtinNetwork } from "./builtin.ts";
import { createExecutor } from "./executor.ts";
import { importOnnx } from "./onnx.ts";
import { extractTasks, taskKey } from "./tasks.ts";

const EXPORT = fileURLToPath(new URL("./_torch_export.py", import.meta.url));

/** A Python with torch and torchvision: `$TB_PYTHON`, `python3` or Debian's `/usr/bin/python3`. */
function torchPython(): string | undefined {
  const candidates = [Deno.env.get("TB_PYTHON"), "python3", "/usr/bin/python3"];
  return candidates.find((py) => {
    if (!py) return false;
    try {
      return new Deno.Command(py, {
        args: ["-c", "import torch, torchvision"],
        stdout: "null",
        stderr: "null",
      }).outputSync().success;
    } catch {
      return false;
    }
  });
}

const PYTHON = torchPython();

async function floats(path: string): Promise<Float32Array> {
  const bytes = await Deno.readFile(path);
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

Deno.test({
  name: "models exported from PyTorch import to the built-in task list and run to PyTorch's output",
  ignore: PYTHON === undefined,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "tb-torch-" });
    try {
      const out = await new Deno.Command(PYTHON!, { args: [EXPORT, dir], stderr: "piped" })
        .output();
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
      const resnet = importOnnx(await Deno.readFile(join(dir, "resnet18.onnx")), "resnet18");
      const keyed = (n: Parameters<typeof extractTasks>[0]) =>
        extractTasks(n).map((t) => `${taskKey(t.workload)}x${t.weight}`);
      assert.deepEqual(keyed(resnet.network), keyed(builtinNetwork("resnet18")));
      for (const name of ["tiny", "resnet18"]) {
        const { network, weights } = name === "tiny"
          ? importOnnx(await Deno.readFile(join(dir, "tiny.onnx")), name)
          : resnet;
        const x = await floats(join(dir, `${name}_in.bin`));
        const want = await floats(join(dir, `${name}_out.bin`));
        const ex = await createExecutor(network, weights);
        try {
          const got = ex.run(x);
          assert.equal(got.length, want.length);
          const scale = Math.max(...want.map(Math.abs));
          let err = 0;
          got.forEach((v, i) => err = Math.max(err, Math.abs(v - want[i])));
          console.log(
            `${name}: max |executor - PyTorch| ${err.toExponential(2)} of ${scale.toFixed(3)}`,
          );
          assert.ok(err <= 1e-4 * scale, `${name}: max error ${err} of ${scale}`);
        } finally {
          ex.close();
        }
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
