/**
 * Finds a network by what a user types: a built-in name (`resnet18`,
 * `mobilenet_v2`, `squeezenet1_1`), a `FILE.json` of layers, or a
 * `FILE.onnx` model (whose initializers come back as its weights).
 *
 * @example
 * ```ts
 * import { loadNetwork } from "./load.ts";
 * const { network, weights } = await loadNetwork("squeezenet1_1");
 * if (network.name !== "squeezenet1_1" || weights !== undefined) throw new Error();
 * ```
 * @module
 */
import { BUILTIN_NETWORKS, type BuiltinOptions } from "./builtin.ts";
import { type Network, NetworkError, parseNetwork } from "./network.ts";
import { importOnnx } from "./onnx.ts";
import type { Weights } from "./weights.ts";

/** Loads a network; a file that cannot be read or parsed is a {@link NetworkError} naming it. */
export async function loadNetwork(
  spec: string,
  options: BuiltinOptions = {},
): Promise<{ network: Network; weights?: Weights }> {
  if (Object.hasOwn(BUILTIN_NETWORKS, spec)) return { network: BUILTIN_NETWORKS[spec](options) };
  if (!spec.endsWith(".json") && !spec.endsWith(".onnx")) {
    throw new NetworkError(
      `Unknown network "${spec}": give ${
        Object.keys(BUILTIN_NETWORKS).join(", ")
      }, FILE.json or FILE.onnx`,
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(spec);
  } catch (e) {
    throw new NetworkError(`Cannot read network file ${spec}: ${(e as Error).message}`);
  }
  const name = spec.replace(/^.*\//, "").replace(/\.(json|onnx)$/, "");
  if (spec.endsWith(".onnx")) return importOnnx(bytes, name);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new NetworkError(`${spec} is not JSON: ${(e as Error).message}`);
  }
  try {
    return { network: parseNetwork(json) };
  } catch (e) {
    throw new NetworkError(`${spec}: ${(e as Error).message}`);
  }
}
