#!/usr/bin/env bash
# Run setup, then the tuning study: scripts/main.sh [study args...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
DENO="$ROOT/.tools/deno/node_modules/.bin/deno"
exec "$DENO" task study "$@"
