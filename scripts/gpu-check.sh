#!/usr/bin/env bash
# The CUDA backend on a real GPU, in one go: set-up from the carried folder (scripts/gpu-carry.sh),
# the addon and the CUDA tests built for this GPU's architecture, then nvidia-smi, ctest -R cuda,
# test:gpu and a short bench:gpu, each under a timeout and all inside one overall deadline, so the
# script never hangs and ends within GPU_CHECK_SECONDS (default 470). Everything is teed to
# $OUT/gpu-check.log (a temp folder when OUT is unset); the last lines are one summary line per step,
# also in $OUT/summary.txt. Without a GPU (a dry run, as in CI) it checks its tools and reports each
# GPU step as skipped, in seconds. Exit status: 0 when no step failed.
#   GPU_CARRY            the carried folder (default .gpu-carry)
#   GPU_CHECK_SKIP       steps to leave out (names as in the summary, space-separated), for a short
#                        rerun of the steps a fix touched
#   GPU_CHECK_REHEARSE=1 without a GPU, still run the set-up and the build (for compute capability
#                        9.0) and every later step: a rehearsal of the device call on this machine
#   GPU_CHECK_BUILD_SECONDS  the build step's limit (default 240, sized for the device's 16 cores); a
#                        rehearsal on a small, loaded machine raises it (with GPU_CHECK_SECONDS)
#   GPU_CHECK_NCU="TEST KERNELS"  after the build, Nsight Compute over test_cuda_parity's cases whose
#                        name holds TEST, for the kernels matching the regex KERNELS (speed of light,
#                        occupancy, launch, warp states, memory), the card's clocks left as they are;
#                        the report in $OUT/ncu.txt
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CARRY=$(realpath -m "${GPU_CARRY:-.gpu-carry}")
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ttstore-gpu.XXXXXX")
LOG=$OUT/gpu-check.log
DEADLINE=$(($(date +%s) + ${GPU_CHECK_SECONDS:-470}))
JOBS=$(nproc)
SUMMARY=()
FAILED=0
exec > >(tee -a "$LOG") 2>&1

# step NAME SECONDS COMMAND...: runs COMMAND (a program, or a function of this script, which must be
# exported) under timeout (its own limit or what is left of the
# deadline, whichever is less) and records one summary line.
step() {
  local name=$1 limit=$2
  shift 2
  if [[ " ${GPU_CHECK_SKIP:-} " == *" $name "* ]]; then
    skip "$name" "GPU_CHECK_SKIP"
    return 0
  fi
  local left=$((DEADLINE - $(date +%s)))
  ((limit > left)) && limit=$left
  if ((limit < 5)); then
    SUMMARY+=("$(printf '%-22s SKIPPED (the overall deadline has passed)' "$name")")
    FAILED=1
    return 1
  fi
  echo
  echo "=== $name (limit ${limit} s) $(date -u +%H:%M:%S)"
  local t0=$(date +%s) rc
  if declare -F "$1" >/dev/null; then
    timeout --kill-after=10 "$limit" bash -c '"$@"' _ "$@"
  else
    timeout --kill-after=10 "$limit" "$@"
  fi
  rc=$?
  local took=$(($(date +%s) - t0)) verdict
  case $rc in
    0) verdict=ok ;;
    124 | 137) verdict="TIMED OUT after ${limit} s"; FAILED=1 ;;
    *) verdict="FAILED (exit $rc)"; FAILED=1 ;;
  esac
  SUMMARY+=("$(printf '%-22s %-28s %4d s' "$name" "$verdict" "$took")")
  return $rc
}

skip() { SUMMARY+=("$(printf '%-22s skipped (%s)' "$1" "$2")"); }

finish() {
  echo
  echo "=== summary ($(hostname), $(date -u +%Y-%m-%dT%H:%M:%SZ))"
  printf '%s\n' "${SUMMARY[@]}" | tee "$OUT/summary.txt"
  rm -rf "$WORK"
  exit $FAILED
}

# ---- the device --------------------------------------------------------------------------------------
GPU=""
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  step nvidia-smi 30 nvidia-smi
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
  GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  echo "device 0: $GPU, compute capability ${cap:0:-1}.${cap: -1}"
else
  skip nvidia-smi "no NVIDIA driver or device here"
  if [ "${GPU_CHECK_REHEARSE:-}" = 1 ]; then
    cap=90
    GPU="none (a rehearsal)"
  fi
fi

CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
GEN=Ninja
command -v ninja >/dev/null || GEN="Unix Makefiles"
echo "tools: nvcc $([ -x "$CUDACXX" ] && "$CUDACXX" --version | tail -1 || echo missing), $(cmake --version | head -1), generator $GEN, $JOBS cores"

if [ -z "$GPU" ]; then
  for s in set-up build ctest-cuda test-gpu bench-gpu; do skip "$s" "no GPU"; done
  [ -d "$CARRY" ] && echo "carried folder $CARRY: $(du -sh "$CARRY" | cut -f1)" || echo "no carried folder at $CARRY (scripts/gpu-carry.sh makes it)"
  finish
fi

# ---- set-up from the carried folder ------------------------------------------------------------------
SYSROOT=$WORK/sysroot
LIBDIRS="$SYSROOT/usr/lib/x86_64-linux-gnu/openblas-pthread:$SYSROOT/usr/lib/x86_64-linux-gnu"
setup() {
  for f in node.xz node-api js.tar.xz debs; do
    [ -e "$CARRY/$f" ] || { echo "missing $CARRY/$f: run scripts/gpu-carry.sh before the device call"; return 1; }
  done
  mkdir -p "$WORK/bin" "$SYSROOT" || return 1
  xz -dc "$CARRY/node.xz" >"$WORK/bin/node" && chmod +x "$WORK/bin/node" || return 1
  for deb in "$CARRY"/debs/*.deb; do
    if command -v dpkg >/dev/null; then
      dpkg -x "$deb" "$SYSROOT" || return 1
    else
      (cd "$WORK" && rm -rf ar && mkdir ar && cd ar && ar x "$deb" && tar -xf data.tar.* -C "$SYSROOT") || return 1
    fi
  done
  # dist/ and node_modules/ are unpacked where the code looks for them (as real folders: Node resolves
  # a link to its target, and the code finds its package root upwards from there); neither is tracked,
  # so neither is in the working tree that travelled.
  # An earlier check's folders (marked) are replaced; anyone else's are left alone.
  for d in node_modules dist; do
    if [ -L "$ROOT/$d" ] || [ -f "$ROOT/$d/.from-gpu-carry" ]; then
      rm -rf "$ROOT/$d"
    elif [ -e "$ROOT/$d" ]; then
      echo "$ROOT/$d exists and is not from the carried folder; not replacing it"
      return 1
    fi
  done
  xz -dc "$CARRY/js.tar.xz" | tar -C "$ROOT" -xf - || return 1
  touch "$ROOT/node_modules/.from-gpu-carry" "$ROOT/dist/.from-gpu-carry"
  "$WORK/bin/node" -v
}
export -f setup
export ROOT CARRY WORK SYSROOT LIBDIRS
export PATH="$WORK/bin:$PATH"
export LD_LIBRARY_PATH="$LIBDIRS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
step set-up 60 setup || finish

# ---- build: the addon and the CUDA tests only, for this GPU, on every core ------------------------------
BUILD=$WORK/build
build() {
  LDFLAGS="-Wl,-rpath-link,$LIBDIRS" CUDACXX="$CUDACXX" cmake -S "$ROOT" -B "$BUILD" -G "$GEN" \
    -DCMAKE_BUILD_TYPE=Release -DTTS_BUILD_TESTS=ON -DTTS_BUILD_BENCH=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="${cap}-real" \
    -DCMAKE_LIBRARY_PATH="$SYSROOT/usr/lib/x86_64-linux-gnu/openblas-pthread;$SYSROOT/usr/lib/x86_64-linux-gnu" \
    -DCMAKE_INCLUDE_PATH="$SYSROOT/usr/include/x86_64-linux-gnu/openblas-pthread;$SYSROOT/usr/include" \
    -DCMAKE_JS_VERSION=carried -DCMAKE_JS_INC="$CARRY/node-api;$ROOT/node_modules/node-addon-api" \
    -DCMAKE_LIBRARY_OUTPUT_DIRECTORY="$BUILD/Release" || return 1
  grep -E '^(BLAS_openblas_LIBRARY|LAPACKE_LIBRARY|CMAKE_CUDA_ARCHITECTURES)' "$BUILD/CMakeCache.txt"
  cmake --build "$BUILD" --parallel "$JOBS" --target ttstore test_cuda_parity test_cuda_sweep
}
export -f build
export BUILD CUDACXX GEN cap JOBS
step build "${GPU_CHECK_BUILD_SECONDS:-240}" build || finish
export TTSTORE_ADDON=$BUILD/Release/ttstore.node
node -e 'console.log("addon:", JSON.stringify(require(process.env.TTSTORE_ADDON).info()))'

if [ -n "${GPU_CHECK_NCU:-}" ]; then
  ncu_run() {
    local ncu
    ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    [ -n "$ncu" ] || { echo "no ncu here"; return 1; }
    "$ncu" --clock-control none --kernel-name "regex:$2" --launch-count 16 --section SpeedOfLight \
      --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
      "$BUILD/test_cuda_parity" "$1" >"$OUT/ncu.txt" 2>&1
    local rc=$?
    grep -E '^  [a-z_]+.*\(|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Stall' "$OUT/ncu.txt" | head -200
    return $rc
  }
  export -f ncu_run
  export OUT
  read -r ncu_test ncu_kernels <<<"$GPU_CHECK_NCU"
  step ncu 150 ncu_run "$ncu_test" "$ncu_kernels"
fi

# ---- the checks ------------------------------------------------------------------------------------------
# Traced: the `select ...` timing lines of test_cuda_parity follow the trace of each call.
step ctest-cuda 120 env TTSTORE_CUDA_TRACE=1 ctest --test-dir "$BUILD" -R cuda --output-on-failure -V
step test-gpu 150 node node_modules/mocha/bin/mocha.js --config test-gpu/mocharc.json
if python3 -c 'import torch' 2>/dev/null; then
  echo "PyTorch $(python3 -c 'import torch; print(torch.__version__, torch.cuda.is_available())')"
else
  echo "python3 has no torch here: the PyTorch TT-SVD baseline is not measured"
fi
# TTSTORE_CUDA_TRACE: the backend prints where each call's time went (native/cuda/src/trace.hpp).
step bench-gpu 240 env TTSTORE_CUDA_TRACE=1 BENCH_GPU_LOG2=26,28 BENCH_GPU_CANDIDATES=100000 node dist/bench/gpu.js
finish
