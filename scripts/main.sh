#!/usr/bin/env bash
# Set up what the tuning study uses (setup.sh main: gcc, OpenMP, XGBoost, Deno), then run it:
# scripts/main.sh [study args...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh main
DENO="$ROOT/.tools/deno/node_modules/.bin/deno"
exec "$DENO" task study "$@"
