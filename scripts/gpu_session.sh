#!/usr/bin/env bash
# The one command a GPU session runs on the device (issue 15): tests, cuBLAS/cuDNN peers and tuning
# runs, in stages that each fit in a 10-minute call, everything written under --out.
#
#   bash scripts/gpu_session.sh --stage tests|peers|tune4096|tune4096tf32|tune1024|conv[,...] [options]
#
#   --out DIR       where results go (default $OUT, else WORK/out)
#   --work DIR      state kept between calls: the runs' databases, nvcc and reference caches,
#                   the unpacked bundle (default .cache/gpu_session under the repository)
#   --bundle FILE   the offline bundle to run from (default dist/tunebook-bundle.tar.xz when this
#                   tree has no deno); it is unpacked once into WORK/bundle
#   --seconds N     wall seconds a tuning stage may tune before it is stopped (default 480); the
#                   run stays resumable and the next call of the same stage resumes it
#   --call-seconds N  wall seconds this whole call may take (default 570, under the 10 minutes of
#                   a device call): a tuning stage gets at most what is left less 30 s for its
#                   last round, and is skipped (for the next call) when under 60 s are left
#   --strategy S    strategy of the tuning stages (default ansor: the default GPU space)
#   --dry-run       print what each stage would run, run nothing
#
# Stages:
#   tests     the CUDA, PTX and PoCL tests (PoCL ones only where libOpenCL loads) -> tests.log/.json
#   peers     bench/gpu_peers.ts (cuBLAS FP32/TF32, cuDNN, dense+bias+ReLU) beside the best records
#             of the tuning stages' databases, with the ratios (FP32 records against FP32, FP32 or
#             TF32 records against TF32) -> peers.md, peers.json
#   tune4096  tune matmul 4096^3 on the default GPU space, FP32 kernels only (--math fp32; 500
#             trials, over several calls), the GEMM configurations first
#   tune4096tf32  the same with TF32 tensor cores (--math tf32; 300 trials)
#   tune1024  tune matmul 1024^3, FP32 (300 trials)
#   conv      tune ResNet-18 conv2, conv2d 1,64,56,56,64,3,3,1,1, FP32 (300 trials)
# A tuning stage writes <stage>.json (its summary, trials measured in this call, trials/s),
# <stage>.log and a copy of its database.
#
# Without a CUDA device each stage says so: tests still run (they take their no-device paths),
# peers and the tuning stages write {"gpu": false, ...} and are skipped.
# Exit status: 0 every stage ran or was skipped for want of a GPU; 1 a stage failed (a test, a
# tune or the bench); 2 bad arguments.
#
# A GPU session, from this repository (the device has no Deno and no network):
#   bash scripts/bundle.sh                       # here: dist/tunebook-bundle.tar.xz
#   run(command="bash scripts/gpu_session.sh --stage tune4096,conv,tune4096tf32,peers --seconds 140",
#       carry=["dist/tunebook-bundle.tar.xz"])   # the issue's three open targets in one call
# (a session lends 15 minutes of device time; then tests,tune1024 if some is left)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "gpu_session: $1" >&2; exit 2; }

stages="" out="${OUT:-}" work="" bundle="" seconds=480 call_seconds=570 strategy=ansor dry=0
while [ $# -gt 0 ]; do
  case "$1" in
    --stage) stages=${2:-}; shift 2 || usage "--stage needs a value" ;;
    --out) out=${2:-}; shift 2 || usage "--out needs a folder" ;;
    --work) work=${2:-}; shift 2 || usage "--work needs a folder" ;;
    --bundle) bundle=${2:-}; shift 2 || usage "--bundle needs a file" ;;
    --seconds) seconds=${2:-}; shift 2 || usage "--seconds needs a number" ;;
    --call-seconds) call_seconds=${2:-}; shift 2 || usage "--call-seconds needs a number" ;;
    --strategy) strategy=${2:-}; shift 2 || usage "--strategy needs a name" ;;
    --dry-run) dry=1; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown argument $1 (see --help)" ;;
  esac
done
[ -n "$stages" ] ||
  usage "--stage takes one or more of tests,peers,tune4096,tune4096tf32,tune1024,conv"
IFS=, read -r -a stage_list <<<"$stages"
for s in "${stage_list[@]}"; do
  case "$s" in tests | peers | tune4096 | tune4096tf32 | tune1024 | conv) ;;
    *) usage "--stage: unknown stage \"$s\" (tests, peers, tune4096, tune4096tf32, tune1024, conv)" ;;
  esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || usage "--seconds takes a whole number of seconds, got \"$seconds\""
[[ "$call_seconds" =~ ^[1-9][0-9]*$ ]] ||
  usage "--call-seconds takes a whole number of seconds, got \"$call_seconds\""
work=${work:-$here/.cache/gpu_session}
mkdir -p "$work" || usage "--work: cannot create $work"
work=$(cd "$work" && pwd)
out=${out:-$work/out}
mkdir -p "$out" || usage "--out: cannot create $out"
out=$(cd "$out" && pwd)
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"

# Which Deno: the bundle's (this tree is an unpacked bundle), this tree's, or a bundle to unpack.
deno_flags=()
if [ -x "$here/bin/deno" ] && [ -d "$here/.deno_dir" ]; then
  deno="$here/bin/deno" deno_flags=(--cached-only)
  export DENO_DIR="$here/.deno_dir" DENO_NO_UPDATE_CHECK=1
elif [ -z "$bundle" ] && deno=$(command -v "${DENO:-$here/.tools/deno/node_modules/.bin/deno}" ||
  command -v deno); then
  :
else
  bundle=${bundle:-$here/dist/tunebook-bundle.tar.xz}
  [ -f "$bundle" ] || usage "no deno here and no bundle at $bundle (run scripts/bundle.sh, carry it)"
  stamp="$(stat -c '%s %Y' "$bundle")"
  if [ "$(cat "$work/bundle/.stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "gpu_session: unpacking $bundle into $work/bundle" >&2
    rm -rf "$work/bundle" && mkdir -p "$work/bundle" &&
      tar -C "$work/bundle" -xJf "$bundle" && echo "$stamp" >"$work/bundle/.stamp" ||
      { echo "gpu_session: could not unpack $bundle" >&2; exit 1; }
  fi
  # The unpacking counts against the call.
  args=(--stage "$stages" --out "$out" --work "$work" --seconds "$seconds" --strategy "$strategy"
    --call-seconds "$((call_seconds > SECONDS ? call_seconds - SECONDS : 1))")
  [ "$dry" = 1 ] && args+=(--dry-run)
  exec bash "$work/bundle/tunebook/scripts/gpu_session.sh" "${args[@]}"
fi
cd "$here" || exit 1
export TUNEBOOK_CACHE="$work/cache"
run_ts() { "$deno" run "${deno_flags[@]}" -A "$@"; }
say() { echo "gpu_session: $*" >&2; }
say "deno: $deno${deno_flags[*]:+ (${deno_flags[*]})}; work: $work; out: $out"
json_line() { tail -n 1 "$1" 2>/dev/null | grep '^{' || echo null; }

# The device, once per call.
gpu=0 gpu_msg="not probed (--dry-run)"
if [ "$dry" = 0 ]; then
  probe=$(run_ts measure/cuda_probe.ts --cache "$work/cache/cuda" 2>&1 | tail -n 1)
  case "$probe" in *'"ok":true'*) gpu=1 ;; esac
  gpu_msg=$(echo "$probe" | sed -n 's/.*"message":"\([^"]*\)".*/\1/p')
  gpu_msg=${gpu_msg:-$probe}
  { echo "$probe"; nvidia-smi 2>&1 | head -n 20; nvcc --version 2>&1 | tail -n 2; } >"$out/device.txt"
  [ "$gpu" = 1 ] && say "device: $gpu_msg" || say "no GPU: $gpu_msg"
fi
skip_no_gpu() { # stage
  say "$1: no GPU ($gpu_msg); skipped"
  printf '{"stage":"%s","gpu":false,"message":"%s"}\n' "$1" "${gpu_msg//\"/\'}" >"$out/$1.json"
}

stage_tests() {
  local files=(measure/cuda_harness_test.ts measure/cuda_runner_test.ts measure/nvcc_builder_test.ts
    tests/gpu_gemm_ptx_test.ts tests/tune_cuda_cli_test.ts tests/bench_gpu_peers_test.ts
    tests/bench_gpu_peers_build_test.ts)
  local pocl=(measure/opencl_test.ts measure/opencl_runner_test.ts tests/gpu_pocl_test.ts)
  local opencl=0
  { ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so'; } && opencl=1
  [ "$opencl" = 1 ] && files+=("${pocl[@]}") || say "tests: libOpenCL not found: PoCL tests skipped"
  local present=()
  for f in "${files[@]}"; do [ -f "$f" ] && present+=("$f"); done
  if [ "$dry" = 1 ]; then echo "tests: deno test ${present[*]}"; return 0; fi
  [ "$gpu" = 1 ] || say "tests: no GPU ($gpu_msg): the tests take their no-device paths"
  local start=$SECONDS rc
  "$deno" test "${deno_flags[@]}" -A "${present[@]}" >"$out/tests.log" 2>&1
  rc=$?
  local passed failed
  passed=$(sed 's/\x1b\[[0-9;]*m//g' "$out/tests.log" | sed -n 's/.*| \([0-9]*\) passed.*/\1/p' | tail -n 1)
  failed=$(sed 's/\x1b\[[0-9;]*m//g' "$out/tests.log" | sed -n 's/.* \([0-9]*\) failed.*/\1/p' | tail -n 1)
  printf '{"stage":"tests","gpu":%s,"exit":%d,"passed":%s,"failed":%s,"pocl":%s,"seconds":%d}\n' \
    "$([ "$gpu" = 1 ] && echo true || echo false)" "$rc" "${passed:-null}" "${failed:-null}" \
    "$([ "$opencl" = 1 ] && echo true || echo false)" "$((SECONDS - start))" >"$out/tests.json"
  say "tests: exit $rc, ${passed:-?} passed, ${failed:-?} failed (tests.log)"
  return $((rc == 0 ? 0 : 1))
}

stage_peers() {
  local dbs=()
  for s in tune4096 tune4096tf32 tune1024 conv; do
    [ -f "$work/$s.db" ] && dbs+=(--db "$work/$s.db")
  done
  local cmd=(bench/gpu_peers.ts --sizes 1024,4096 --repeat 5 --min-repeat-ms 100 "${dbs[@]}")
  if [ "$dry" = 1 ]; then echo "peers: deno run ${cmd[*]}"; return 0; fi
  [ "$gpu" = 1 ] || { skip_no_gpu peers; return 0; }
  run_ts "${cmd[@]}" >"$out/peers.md" 2>"$out/peers.log"
  local rc=$?
  json_line "$out/peers.md" >"$out/peers.json"
  say "peers: exit $rc (peers.md, peers.json)"
  return $((rc == 0 ? 0 : 1))
}

# Candidates a tune summary line counts as measured (valid + errors; "trials" is the run's budget).
measured() { echo "$1" | sed -n 's/.*"valid":\([0-9]*\),"errors":\([0-9]*\).*/\1 \2/p' | awk '{ print $1 + $2 }'; }

stage_tune() { # stage workload shape trials timeout math
  local stage=$1 db="$work/$1.db"
  local cmd=(cli/tune.ts --db "$db")
  if [ -f "$work/$stage.started" ]; then
    cmd+=(--resume)
  else
    cmd+=(--target cuda --workload "$2" --shape "$3" --trials "$4" --strategy "$strategy"
      --batch 16 --timeout "$5" --math "$6")
  fi
  # What this call has left, less 30 s for the round in flight when the limit comes.
  local left=$((call_seconds - SECONDS - 30)) limit=$seconds
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$dry" = 1 ]; then echo "$stage: timeout ${limit}s deno run ${cmd[*]}"; return 0; fi
  [ "$gpu" = 1 ] || { skip_no_gpu "$stage"; return 0; }
  if [ "$left" -lt 60 ]; then
    say "$stage: ${left}s left in this call (--call-seconds $call_seconds): skipped, run it next"
    printf '{"stage":"%s","gpu":true,"state":"skipped_no_time","seconds_left":%d}\n' "$stage" \
      "$left" >"$out/$stage.json"
    return 0
  fi
  local before
  before=$(measured "$(cat "$work/$stage.summary.json" 2>/dev/null)")
  touch "$work/$stage.started"
  local start=$SECONDS rc
  say "$stage: tuning for at most ${limit}s (${cmd[*]})"
  # SIGTERM stops the run after its round in flight; it stays resumable.
  timeout --signal=TERM --kill-after=25 "$limit" "$deno" run "${deno_flags[@]}" -A "${cmd[@]}" \
    >"$out/$stage.stdout" 2>"$out/$stage.log"
  rc=$?
  local took=$((SECONDS - start)) summary
  summary=$(json_line "$out/$stage.stdout")
  [ "$summary" != null ] && echo "$summary" >"$work/$stage.summary.json"
  local after
  after=$(measured "$summary")
  local done_now=$((${after:-${before:-0}} - ${before:-0}))
  local state=finished
  case $rc in 0) ;; 124 | 130 | 137 | 143) state=stopped_resumable ;; *) state=failed ;; esac
  # A finished run that is resumed again says there is nothing to resume: not a failure.
  if [ $rc = 2 ] && grep -q "No unfinished run" "$out/$stage.log"; then
    state=finished summary=$(cat "$work/$stage.summary.json" 2>/dev/null || echo null)
  fi
  printf '{"stage":"%s","gpu":true,"exit":%d,"state":"%s","seconds":%d,"trials_this_call":%d,"trials_per_second":%s,"summary":%s}\n' \
    "$stage" "$rc" "$state" "$took" "$done_now" \
    "$(awk -v n="$done_now" -v s="$took" 'BEGIN { printf "%.3f", (s > 0 ? n / s : 0) }')" \
    "$summary" >"$out/$stage.json"
  cp "$db" "$out/$stage.db" 2>/dev/null
  say "$stage: $state after ${took}s, $done_now trials this call ($stage.json)"
  [ "$state" = failed ] && return 1
  return 0
}

status=0
for s in "${stage_list[@]}"; do
  case "$s" in
    tests) stage_tests || status=1 ;;
    peers) stage_peers || status=1 ;;
    tune4096) stage_tune tune4096 matmul 4096,4096,4096 500 30 fp32 || status=1 ;;
    tune4096tf32) stage_tune tune4096tf32 matmul 4096,4096,4096 300 30 tf32 || status=1 ;;
    tune1024) stage_tune tune1024 matmul 1024,1024,1024 300 10 fp32 || status=1 ;;
    conv) stage_tune conv conv2d 1,64,56,56,64,3,3,1,1 300 10 fp32 || status=1 ;;
  esac
done
exit $status
