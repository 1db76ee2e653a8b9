// Finding and loading the compiled addon. The code runs from dist/src/engine/ after a build, so the
// package root is found by walking up to package.json rather than by a fixed relative path.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { NativeAddon } from './native.js';

/** Directory holding the package.json above `from` (a directory); throws if there is none. */
export function packageRoot(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** Where the addon is looked for, in order: $TTSTORE_ADDON, the cmake-js build, the node-gyp build. */
export function addonCandidates(root: string = packageRoot()): string[] {
  const fromEnv = process.env.TTSTORE_ADDON;
  return [
    ...(fromEnv ? [path.resolve(root, fromEnv)] : []),
    path.join(root, 'build', 'cmake', 'Release', 'ttstore.node'),
    path.join(root, 'build', 'Release', 'ttstore.node'),
  ];
}

/** Loads the first addon that exists (synchronous, once per process; the caller caches it). */
export function loadAddon(): NativeAddon {
  const candidates = addonCandidates();
  const require = createRequire(import.meta.url);
  const fromEnv = process.env.TTSTORE_ADDON;
  // An explicit choice that does not exist is a configuration error, not a reason to fall back.
  if (fromEnv && !existsSync(candidates[0]!)) {
    throw new Error(`TTSTORE_ADDON=${fromEnv}: no such file (${candidates[0]})`);
  }
  for (const file of candidates) {
    if (existsSync(file)) return require(file) as NativeAddon;
  }
  throw new Error(
    `ttstore native addon not found (looked in ${candidates.join(', ')}); ` +
      'build it with `npm run build:native` or point TTSTORE_ADDON at a ttstore.node',
  );
}
