#!/usr/bin/env bash
# Idempotent setup of the tools tunebook needs, sized to the job: it installs the groups named
# on its command line (default: main), prints what it installs and why, and skips what is
# already present. Safe with CI=true and no stdin.
#
#   bash scripts/setup.sh [GROUP...]
#
#   main         what the main job (scripts/main.sh: the matmul study) uses: Deno (pinned, from
#                npm, into <repo>/.tools/deno), gcc and the OpenMP runtime, XGBoost (cost
#                models), clang-14 with libomp on a CPU without AVX-512, the Deno Jupyter kernel
#                file, and `deno install --entrypoint` (the npm packages the modules name)
#   notebooks    Jupyter (nbconvert, nbclient, ipykernel): running notebooks/
#   opencl       OpenCL on the CPU (pocl): --target cuda's OpenCL path and its tests
#   peers        the peers of bench/peers.ts: g++, OpenBLAS, oneDNN, Halide 14
#   torch        PyTorch on the CPU (python3-torch, python3-torchvision): bench/network_peers.ts
#                and network/torch_test.ts (about 400 MB with OpenCV as its dependency)
#   distributed  Redis and PostgreSQL: --queue and postgres:// records (tests start their own
#                servers on free ports of 127.0.0.1)
#   browser      Chromium: the report test's headless screenshot
#   test         every group: what scripts/test.sh needs
set -euo pipefail

DENO_VERSION="2.9.6"
ALL_GROUPS=(main notebooks opencl peers torch distributed browser)
declare -A GROUP_PACKAGES=(
  [main]="gcc libc6-dev libgomp1 libxgboost0 libxgboost-dev"
  [notebooks]="jupyter-nbconvert python3-nbclient jupyter-client python3-ipykernel"
  [opencl]="pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev"
  [peers]="g++ libopenblas-dev libdnnl-dev libhalide14-0-dev"
  [torch]="python3-torch python3-torchvision"
  [distributed]="redis-server postgresql"
  [browser]="chromium"
)
declare -A GROUP_WHY=(
  [main]="the C kernels (gcc, OpenMP) and the XGBoost cost models of the tuning study"
  [notebooks]="running the notebooks of notebooks/ (Jupyter with the Deno kernel)"
  [opencl]="OpenCL on the CPU (pocl), for the GPU code path without a GPU"
  [peers]="the peers bench/peers.ts compares with (OpenBLAS, oneDNN, Halide 14)"
  [torch]="PyTorch on the CPU, the peer of bench/network_peers.ts and network/torch_test.ts"
  [distributed]="distributed measurement (Redis) and shared records (PostgreSQL)"
  [browser]="the headless-Chromium screenshot of the report test"
)
# On a CPU without AVX-512, TUNEBOOK_CC=clang-14 builds kernels 2-10x faster than gcc,
# which keeps the generated code's 16-float vectors in memory there (ir/target_cpu.ts).
if ! grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  GROUP_PACKAGES[main]+=" clang-14 libomp-14-dev"
fi

groups=()
for g in "${@:-main}"; do
  if [[ "$g" == test || "$g" == all ]]; then
    groups+=("${ALL_GROUPS[@]}")
  elif [[ -n "${GROUP_PACKAGES[$g]+x}" ]]; then
    groups+=("$g")
  else
    printf '[setup] error: unknown group "%s"; known: %s, test\n' "$g" "${ALL_GROUPS[*]}" >&2
    exit 2
  fi
done
# Deduplicated, in the order of ALL_GROUPS.
wanted=()
for g in "${ALL_GROUPS[@]}"; do
  for h in "${groups[@]}"; do [[ "$g" == "$h" ]] && { wanted+=("$g"); break; }; done
done
want() { local g; for g in "${wanted[@]}"; do [[ "$g" == "$1" ]] && return 0; done; return 1; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
exec </dev/null

DENO="$ROOT/.tools/deno/node_modules/.bin/deno"

log() { printf '[setup] %s\n' "$*"; }

# --- 1. Deno (every group: the tests and features run on it) -------------------
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

# --- 2. Debian packages, by group ---------------------------------------------
is_installed() {
  # Capture first: `dpkg -s | grep -q` can die of SIGPIPE under pipefail.
  local status
  status="$(dpkg -s "$1" 2>/dev/null)" || return 1
  grep -qx 'Status: install ok installed' <<<"$status"
}
updated=""
for g in "${wanted[@]}"; do
  missing=()
  for pkg in ${GROUP_PACKAGES[$g]}; do
    if is_installed "$pkg"; then
      log "skip: apt package $pkg already installed ($g)"
    else
      missing+=("$pkg")
    fi
  done
  ((${#missing[@]} > 0)) || continue
  SUDO=()
  if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO=(sudo -n)
    else
      log "error: need root or sudo to install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  log "install ($g): apt packages ${missing[*]}, for ${GROUP_WHY[$g]}"
  if [[ -z "$updated" ]]; then
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    updated=1
  fi
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
done

# --- 3. Deno Jupyter kernel (main: a file; Jupyter itself is the notebooks group) ---
KERNEL_JSON="${HOME:-/root}/.local/share/jupyter/kernels/deno/kernel.json"
if ! want main && ! want notebooks; then
  :
elif [[ -f "$KERNEL_JSON" ]]; then
  log "skip: deno jupyter kernel already at $KERNEL_JSON"
else
  log "install: deno jupyter kernel"
  "$DENO" jupyter --install
fi

# --- 4. npm dependencies of the modules (main) ----------------------------------
if ! want main; then
  log "done (${wanted[*]})"
  exit 0
fi
log "run: deno install --entrypoint (cache the npm dependencies of every module)"
mapfile -t entrypoints < <(git ls-files '*.ts' 2>/dev/null || find . -name '*.ts' -not -path './node_modules/*' -not -path './.tools/*')
# (its notice of npm build scripts it skipped is dropped: none of them is needed)
"$DENO" install --quiet --entrypoint "${entrypoints[@]}" 2>&1 |
  { grep -v -e 'build scripts' -e 'approve-scripts' -e '[│╭╰]' || true; }

log "done (${wanted[*]})"
