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
