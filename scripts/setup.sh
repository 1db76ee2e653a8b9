#!/usr/bin/env bash
# Idempotent set-up behind `npm start` and `npm test`: system packages (Debian/Ubuntu, as root),
# npm dependencies, the native addon (cmake-js), the TypeScript build and the web console (Vite).
# Each step runs only when its inputs changed, so after the first run this takes a second.
set -euo pipefail
cd "$(dirname "$0")/.."

DEB_PACKAGES=(libopenblas-dev liblapacke-dev cmake g++ make python3)

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup: missing system packages: ${missing[*]}" >&2
    echo "setup: install them with: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# newer_than TARGET PATH...: true when TARGET is missing or any file under PATH is newer.
newer_than() {
  local target=$1; shift
  [ -e "$target" ] || return 0
  [ -n "$(find "$@" -newer "$target" -type f -print -quit 2>/dev/null)" ]
}

if newer_than node_modules/.package-lock.json package.json package-lock.json; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund
fi
if newer_than build/cmake/Release/ttstore.node CMakeLists.txt native; then
  echo "setup: building the native addon (cmake-js)"
  npm run --silent build:native
fi
if newer_than dist/.stamp src test test-gpu bench clients/typescript/src clients/typescript/tools tsconfig.json; then
  echo "setup: compiling TypeScript"
  npm run --silent build:ts
  touch dist/.stamp
fi
if newer_than dist/console/index.html console; then
  echo "setup: building the web console (Vite)"
  npm run --silent build:console
fi
