#!/usr/bin/env bash
# Run setup, then format check, lint and the test suite: scripts/test.sh [test args...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
DENO="$ROOT/.tools/deno/node_modules/.bin/deno"
"$DENO" fmt --check
"$DENO" lint
"$DENO" task test "$@"
