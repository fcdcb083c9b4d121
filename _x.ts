import { recordedTraces } from "./bench/network_peers.ts";
import { builtinNetwork } from "./network/builtin.ts";
import { createExecutor } from "./network/executor.ts";
import { randomWeights } from "./network/weights.ts";
const name = Deno.args[0], db = Deno.args[1];
const net = builtinNetwork(name);
const traces = recordedTraces(db, net, 16);
const ex = await createExecutor(net, randomWeights(net, 1), { traces, block: 16 });
console.log("latency", ex.latency({ repeat: 10, warmup: 2 }).medianMs);
const prof = ex.profile({ repeat: 10, warmup: 1 });
const by = new Map<string, number>();
for (const p of prof) {
  const k = p.tunable ? "tunable" : p.kernel.split("(")[0];
  by.set(k, (by.get(k) ?? 0) + p.medianMs);
}
console.log([...by].map(([k, v]) => `${k} ${v.toFixed(3)}`).join("\n"));
for (const p of prof) if (!p.tunable) console.log(p.layer, p.kernel, p.medianMs.toFixed(3));
ex.close();
