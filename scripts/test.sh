#!/usr/bin/env bash
# Run setup, then format check, lint and the test suite: scripts/test.sh [test args...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
DENO="$ROOT/.tools/deno/node_modules/.bin/deno"
"$DENO" fmt --check
"$DENO" lint
# The API reference's doc lint, on the public modules that pass it so far (docs/architecture.md)
"$DENO" doc --lint measure/mod.ts
# Keep deno's own output, and end with the plain "N passed, N failed" line CI logs are read for.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
"$DENO" task test "$@" 2>&1 | tee "$log" || status=$?
summary="$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^(ok|FAILED) \| [0-9]+ passed' | tail -n 1 || true)"
if [ -n "$summary" ]; then
  passed="$(printf '%s' "$summary" | sed -E 's/.* ([0-9]+) passed.*/\1/')"
  failed="$(printf '%s' "$summary" | sed -E 's/.* ([0-9]+) failed.*/\1/')"
  echo "tests: $passed passed, $failed failed"
fi
exit "$status"
