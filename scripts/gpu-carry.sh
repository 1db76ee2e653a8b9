#!/usr/bin/env bash
# Prepares the folder that travels with scripts/gpu-check.sh to a GPU machine (default .gpu-carry/,
# ignored by git; the first argument names another). That machine has nvcc, CMake, ninja and a python3
# with PyTorch, but no Node, no npm, no apt and no network, and at most 64 MiB travels beside the
# working tree. So this carries only what cannot be had there:
#   node.xz           this machine's node binary, xz-compressed
#   node-api/         Node-API's C headers, to build the addon there (the CPU there may differ)
#   js.tar.xz         node_modules/ (the packages the service, test:gpu and bench:gpu load, pruned of
#                     sources) and dist/ (the compiled TypeScript), xz-compressed: as plain folders
#                     they outgrow the 64 MiB
#   debs/             Debian's OpenBLAS and LAPACKE, unpacked there by gpu-check.sh into a folder of
#                     its own (never into /)
# Run on Debian/Ubuntu with npm ci done; it builds dist/ when missing and prints the folder's size.
set -euo pipefail
cd "$(dirname "$0")/.."
CARRY=${1:-.gpu-carry}
DEBS=(libopenblas0-pthread libopenblas-pthread-dev liblapacke liblapacke-dev libtmglib3 libgfortran5 libquadmath0)
# What test:gpu and bench:gpu load beside the service's own dependencies.
EXTRA_PACKAGES=(mocha chai)

[ -d node_modules ] || { echo "gpu-carry: run npm ci first" >&2; exit 1; }
npx tsc -p tsconfig.json

# node.xz is kept from an earlier run while the node binary is unchanged (compressing it takes a minute).
node_bin=$(command -v node)
if [ -f "$CARRY/node.xz" ] && [ "$CARRY/node.xz" -nt "$node_bin" ]; then
  mv "$CARRY/node.xz" "$CARRY.node.xz"
fi
rm -rf "$CARRY"
mkdir -p "$CARRY/debs"
echo "gpu-carry: node $(node -v)"
if [ -f "$CARRY.node.xz" ]; then
  mv "$CARRY.node.xz" "$CARRY/node.xz"
else
  xz -T0 -6 -c "$node_bin" >"$CARRY/node.xz"
fi

cp -r node_modules/node-api-headers/include "$CARRY/node-api"

# The dependency closure of package.json's dependencies (but the scale-out clients) and EXTRA_PACKAGES, resolved as Node resolves
# them (nearest node_modules upwards), copied with the same nesting.
node --input-type=module - "$CARRY" "${EXTRA_PACKAGES[@]}" <<'EOF'
import { cpSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
const [carry, ...extra] = process.argv.slice(2);
const root = process.cwd();
const pkg = (dir) => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
const find = (from, name) => {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === root) return undefined;
  }
};
// sqlite3's own dependencies that only install it (download or compile its binding), never load it.
const installOnly = new Set(['sqlite3/prebuild-install', 'sqlite3/tar', 'sqlite3/node-gyp', 'sqlite3/node-addon-api']);
// The clients of the scale-out engines (PostgreSQL, Redis, S3): the server loads them only when their
// variable is set, which the GPU check never does.
const scaleOutOnly = new Set(['pg', 'ioredis', '@aws-sdk/client-s3']);
const seen = new Set();
const visit = (from, name, optional) => {
  const dir = find(from, name);
  if (!dir) {
    if (optional) return;
    throw new Error(`gpu-carry: ${name} (needed from ${path.relative(root, from) || '.'}) is not installed`);
  }
  if (seen.has(dir)) return;
  seen.add(dir);
  const p = pkg(dir);
  const wanted = (dep) => !installOnly.has(`${p.name}/${dep}`);
  for (const dep of Object.keys(p.dependencies ?? {}).filter(wanted)) visit(dir, dep, false);
  for (const dep of Object.keys(p.optionalDependencies ?? {}).filter(wanted)) visit(dir, dep, true);
};
for (const dep of [...Object.keys(pkg(root).dependencies).filter((d) => !scaleOutOnly.has(d)), ...extra]) visit(root, dep, false);
// A nested package is copied with its parent's folder tree, so copy outermost first and skip nested.
const dirs = [...seen].sort();
for (const dir of dirs) {
  const rel = path.relative(root, dir);
  cpSync(dir, path.join(carry, rel), {
    recursive: true,
    filter: (src) => !path.relative(dir, src).startsWith('node_modules'),
  });
}
console.log(`gpu-carry: ${dirs.length} packages`);
EOF
# sqlite3 keeps its compiled binding and its JavaScript; its C sources and build leftovers stay here.
sq="$CARRY/node_modules/sqlite3"
rm -rf "$sq/deps" "$sq/src" "$sq/node-addon-api" "$sq/binding.gyp"
find "$sq/build" -mindepth 1 -maxdepth 1 ! -name Release -exec rm -rf {} +
find "$sq/build/Release" -mindepth 1 ! -name node_sqlite3.node -exec rm -rf {} +
[ -f "$sq/build/Release/node_sqlite3.node" ] || { echo "gpu-carry: sqlite3's binding is not built" >&2; exit 1; }
find "$CARRY/node_modules" \( -name '*.md' -o -name '*.d.ts' -o -name '*.map' -o -name '*.ts' \) -type f -delete

cp -r dist "$CARRY/dist"
tar -C "$CARRY" -cf - node_modules dist | xz -T0 -6 >"$CARRY/js.tar.xz"
rm -rf "$CARRY/node_modules" "$CARRY/dist"

(cd "$CARRY/debs" && apt-get download "${DEBS[@]}" >/dev/null)

echo "gpu-carry: $(du -sh "$CARRY" | cut -f1) in $CARRY:"
du -sh "$CARRY"/* | sed 's/^/  /'
