#!/usr/bin/env bash
# npm run test:asan: the native core's ctest tests built with AddressSanitizer and UBSan in their own
# build dir (build/asan), run without the tests labelled no_sanitizer (CMakeLists.txt names them and
# why; the plain ctest run covers them). Any sanitizer report fails the run: ASan and UBSan stop the
# test at their first report, and LeakSanitizer fails it at exit.
# usage: test-asan.sh [--build-only]   (--build-only: build, and leave the run to a later call; CI
# builds while other steps wait on the network or one core, then runs). TTS_ASAN_DIR moves the build
# dir (CI keeps it out of build/, which `node-gyp rebuild` deletes).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${TTS_ASAN_DIR:-build/asan}
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
# -g1: line tables without variable info: the reports' stacks need only function and file:line, and
# the build is shorter than with -g.
cmake -S . -B "$dir" -DTTS_BUILD_TESTS=ON -DTTS_BUILD_BENCH=OFF -DTTS_WITH_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
# Only the tests this run runs (and what they link): the no_sanitizer ones are not built here either.
mapfile -t targets < <(ctest --test-dir "$dir" -N -LE no_sanitizer | sed -n 's/^ *Test *#[0-9]*: *//p')
cmake --build "$dir" --parallel "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" --target "${targets[@]}"
if [ "${1:-}" = --build-only ]; then exit 0; fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$dir" --output-on-failure -LE no_sanitizer
