#!/usr/bin/env bash
# Baselines of the benchmarks run under Debian's python (/usr/bin/python3) with python3-numpy and
# python3-scipy, and bench:qtt's dense solvers link FFTW (libfftw3-dev, named as an argument);
# installs what is missing (as root), else says how.
set -euo pipefail
missing=()
for p in python3-numpy python3-scipy "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "bench: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "bench: missing ${missing[*]}: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
