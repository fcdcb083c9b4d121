#!/usr/bin/env bash
# Idempotent setup of the tools tunebook needs. Prints what it installs and
# skips what is already present. Safe with CI=true and no stdin.
#
#   1. Deno (pinned) from npm into <repo>/.tools/deno
#   2. Debian packages: C toolchain + OpenMP runtime (and clang-14 with libomp on a CPU
#      without AVX-512), Jupyter bits for notebooks,
#      XGBoost, OpenCL on the CPU, and the peers of bench/peers.ts (g++, OpenBLAS,
#      oneDNN, Halide 14); PyTorch (python3-torch, python3-torchvision) for bench/network_peers.ts;
#      Redis and PostgreSQL for distributed measurement (tests start their own servers on
#      free ports of 127.0.0.1)
#   3. The Deno Jupyter kernel
#   4. `deno install --entrypoint` (caches the npm packages the modules name with full
#      `npm:` specifiers; deno.json has no import map, so a script in any folder can import us)
set -euo pipefail

DENO_VERSION="2.9.6"
APT_PACKAGES=(gcc libc6-dev libgomp1 libxgboost0 libxgboost-dev jupyter-nbconvert python3-nbclient jupyter-client python3-ipykernel pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev g++ libopenblas-dev libdnnl-dev libhalide14-0-dev redis-server postgresql)

# On a CPU without AVX-512, TUNEBOOK_CC=clang-14 builds kernels 2-10x faster than gcc,
# which keeps the generated code's 16-float vectors in memory there (ir/target_cpu.ts).
if ! grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  APT_PACKAGES+=(clang-14 libomp-14-dev)
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
exec </dev/null

DENO="$ROOT/.tools/deno/node_modules/.bin/deno"

log() { printf '[setup] %s\n' "$*"; }

# --- 1. Deno ------------------------------------------------------------------
installed_deno=""
if [[ -x "$DENO" ]]; then
  installed_deno="$("$DENO" --version 2>/dev/null | sed -n 1p || true)"
fi
if [[ "$installed_deno" == "deno $DENO_VERSION "* ]]; then
  log "skip: deno $DENO_VERSION already in .tools/deno"
else
  if ! command -v npm >/dev/null 2>&1; then
    log "error: npm is required to install deno $DENO_VERSION" >&2
    exit 1
  fi
  log "install: deno@$DENO_VERSION from npm into .tools/deno${installed_deno:+ (found: $installed_deno)}"
  npm i --prefix .tools/deno --no-save --no-package-lock --no-audit --no-fund "deno@$DENO_VERSION"
  "$DENO" --version | sed -n 1p
fi

# --- 2. Debian packages -------------------------------------------------------
is_installed() {
  # Capture first: `dpkg -s | grep -q` can die of SIGPIPE under pipefail.
  local status
  status="$(dpkg -s "$1" 2>/dev/null)" || return 1
  grep -qx 'Status: install ok installed' <<<"$status"
}
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if is_installed "$pkg"; then
    log "skip: apt package $pkg already installed"
  else
    missing+=("$pkg")
  fi
done
if ((${#missing[@]} > 0)); then
  SUDO=()
  if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO=(sudo -n)
    else
      log "error: need root or sudo to install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  log "install: apt packages ${missing[*]}"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
fi

# --- 2b. PyTorch on the CPU: the peer of bench/network_peers.ts and network/torch_test.ts ---
torch_missing=()
for pkg in python3-torch python3-torchvision; do
  if is_installed "$pkg"; then
    log "skip: apt package $pkg already installed"
  else
    torch_missing+=("$pkg")
  fi
done
if ((${#torch_missing[@]} > 0)); then
  SUDO=()
  if [[ "$(id -u)" -ne 0 ]]; then SUDO=(sudo -n); fi
  log "install: apt packages ${torch_missing[*]}"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${torch_missing[@]}"
fi

# --- 3. Deno Jupyter kernel ---------------------------------------------------
KERNEL_JSON="${HOME:-/root}/.local/share/jupyter/kernels/deno/kernel.json"
if [[ -f "$KERNEL_JSON" ]]; then
  log "skip: deno jupyter kernel already at $KERNEL_JSON"
else
  log "install: deno jupyter kernel"
  "$DENO" jupyter --install
fi

# --- 4. npm dependencies of deno.json -----------------------------------------
log "run: deno install --entrypoint (cache the npm dependencies of every module)"
mapfile -t entrypoints < <(git ls-files '*.ts' 2>/dev/null || find . -name '*.ts' -not -path './node_modules/*' -not -path './.tools/*')
# (its notice of npm build scripts it skipped is dropped: none of them is needed)
"$DENO" install --quiet --entrypoint "${entrypoints[@]}" 2>&1 |
  { grep -v -e 'build scripts' -e 'approve-scripts' -e '[│╭╰]' || true; }

log "done"
