import assert from "node:assert/strict";
import { join } from "node:path";
import { FEATURE_VERSION } from "./features.ts";
import { loadModel, saveModel } from "./persist.ts";
import { XGBoostRegressor } from "./xgboost.ts";
import type { Candidate } from "../ir/candidate.ts";

const features = (cs: Candidate[]) => ({
  data: Float32Array.from(cs.flatMap((c) => c.knobs!)),
  rows: cs.length,
  cols: 2,
});

Deno.test("a saved model records its feature version and predicts the same after loading", async () => {
  const dir = await Deno.makeTempDir();
  const r = new XGBoostRegressor({ rounds: 20 });
  const cs: Candidate[] = Array.from(
    { length: 64 },
    (_, i) => ({ knobs: [i % 8, Math.floor(i / 8)] }),
  );
  r.fit(features(cs), Float32Array.from(cs, (c) => c.knobs![0] * 2 + c.knobs![1]));
  await saveModel(join(dir, "m"), r, { name: "xgb", featureKind: "knob", samples: 64 });
  const meta = JSON.parse(await Deno.readTextFile(join(dir, "m", "meta.json")));
  assert.equal(meta.featureVersion, FEATURE_VERSION);
  const loaded = await loadModel(join(dir, "m"), features);
  assert.deepEqual(loaded.predict(cs), Array.from(r.predict(features(cs))));
  await Deno.writeTextFile(
    join(dir, "m", "meta.json"),
    JSON.stringify({ ...meta, featureVersion: "tb-features-0" }),
  );
  await assert.rejects(
    () => loadModel(join(dir, "m"), features),
    /trained on features tb-features-0/,
  );
  r.dispose();
  await Deno.remove(dir, { recursive: true });
});
