#!/usr/bin/env bash
# Set up every group the tests use (setup.sh test: Jupyter, pocl, peers, PyTorch, Redis,
# PostgreSQL, Chromium), then format check, lint and the test suite: scripts/test.sh [test args...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh test
DENO="$ROOT/.tools/deno/node_modules/.bin/deno"
"$DENO" fmt --check
"$DENO" lint
# The API reference's doc lint, on the ten public modules of deno.json "exports" (docs/architecture.md)
"$DENO" doc --lint mod.ts ir/mod.ts search/mod.ts measure/mod.ts datasets/mod.ts costmodel/mod.ts tuner/mod.ts rl/mod.ts network/mod.ts plots/mod.ts
# Keep deno's own output, and end with the plain "N passed, N failed" line CI logs are read for.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
"$DENO" task test "$@" 2>&1 | tee "$log" || status=$?
# On an AVX-512 CPU the suite took the 16-lane branch; the lane-dependent tests (templates,
# codegen, convolutions, networks) run once more with 8-lane kernels, as on an AVX2 CPU
# (TUNEBOOK_LANES, measure/cpu.ts), so neither kind of CPU breaks the other unseen. Not with
# test arguments (a chosen subset), nor on an AVX2 CPU, where the suite itself ran with 8 lanes.
LANE_TESTS=(
  search/templates.ts search/templates search/templates_test.ts search/gemm_configs_test.ts
  ir/codegen_c.ts ir/codegen_c_test.ts ir/packing_test.ts ir/epilogue_test.ts
  measure/cpu.ts measure/cpu_test.ts measure/kernel_source_test.ts
  network tuner/network_tuning.ts tuner/network_tuning_test.ts tuner/finalists_test.ts
  costmodel/features_test.ts costmodel/gemm_features.ts rl/env_test.ts
  tests/conv_blocked_test.ts tests/conv_nchwc_test.ts tests/conv_nchwxc_test.ts
  tests/conv_packed_test.ts tests/depthwise_blocked_test.ts tests/codegen_property_test.ts
  tests/layers_test.ts tests/lanes_test.ts tests/tune_network_cli_test.ts
  tests/unity_build_test.ts tests/bench_network_peers_test.ts
  bench/tiles_test.ts bench/matmul_kernels_test.ts bench/network_study_test.ts
)
if [ "$#" -eq 0 ] && grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  lane_files=()
  for f in "${LANE_TESTS[@]}"; do [ -e "$f" ] && lane_files+=("$f"); done
  echo "Lane-dependent tests again with TUNEBOOK_LANES=8 (AVX2's 8-lane kernels on this AVX-512 CPU):"
  TUNEBOOK_LANES=8 "$DENO" task test "${lane_files[@]}" 2>&1 | tee -a "$log" || status=$?
fi
# One line for the whole: the sums of every run's "N passed | N failed".
summaries="$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^(ok|FAILED) \| [0-9]+ passed' || true)"
if [ -n "$summaries" ]; then
  passed=0 failed=0
  while IFS= read -r summary; do
    passed=$((passed + $(printf '%s' "$summary" | sed -E 's/.* ([0-9]+) passed.*/\1/')))
    failed=$((failed + $(printf '%s' "$summary" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
  done <<<"$summaries"
  echo "tests: $passed passed, $failed failed"
fi
exit "$status"
