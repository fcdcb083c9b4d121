/**
 * Shared by the record-store tests (record_store_test.ts, postgres_store_test.ts):
 * a matmul 8x8x8 run started in any {@link RecordStore}.
 * @module
 */
import type { RunInfo } from "./db.ts";
import type { RecordStore } from "./record_store.ts";

/** Records the workload and starts a random-search run of 4 trials with `config`; returns its id. */
export async function startTestRun(
  store: RecordStore,
  config: Record<string, unknown> = {},
): Promise<number> {
  const workloadId = await store.upsertWorkload({ name: "matmul", shape: [8, 8, 8], flops: 1024 });
  const info: RunInfo = {
    strategy: "random",
    seed: 1,
    trials: 4,
    target: "cpu",
    workloadId,
    config,
    machine: { cores: 2 },
    compiler: "gcc",
    tunebookVersion: "test",
  };
  return await store.startRun(info);
}
