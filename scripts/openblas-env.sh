#!/bin/sh
# Runs a native program (ctest's tests and benchmarks, which link OpenBLAS directly) with the
# OpenBLAS settings the service makes for its addon in src/engine/load.ts (configureOpenBlas), each
# only where the caller has not set it; OpenBLAS reads them once, when it loads, so they have to be
# in the environment before the program starts:
#   OPENBLAS_CORETYPE       SkylakeX with AVX-512 F, CD, BW, DQ and VL; Haswell with AVX2 and FMA
#                           (OpenBLAS 0.3.21 falls back to its SSE3 "Prescott" kernels on CPU
#                           models it does not know, 2-3x slower in dgemm);
#   OPENBLAS_THREAD_TIMEOUT 20: idle BLAS threads spin ~2^20 cycles, not ~2^28, before they sleep.
# usage: openblas-env.sh program [args...]
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
  flags=" $(sed -n 's/^flags[[:space:]]*:\(.*\)$/\1/p' /proc/cpuinfo 2>/dev/null | head -n 1) "
  has() { case "$flags" in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
  if has avx512f && has avx512cd && has avx512bw && has avx512dq && has avx512vl; then
    export OPENBLAS_CORETYPE=SkylakeX
  elif has avx2 && has fma; then
    export OPENBLAS_CORETYPE=Haswell
  fi
fi
export OPENBLAS_THREAD_TIMEOUT="${OPENBLAS_THREAD_TIMEOUT:-20}"
exec "$@"
