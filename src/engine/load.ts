// Finding and loading the compiled addon. The code runs from dist/src/engine/ after a build, so the
// package root is found by walking up to package.json rather than by a fixed relative path.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { packageRoot } from '../runtime/paths.js';
import type { NativeAddon } from './native.js';

export { packageRoot };

/** Where the addon is looked for, in order: $TTSTORE_ADDON, the cmake-js build, the node-gyp build. */
export function addonCandidates(root: string = packageRoot()): string[] {
  const fromEnv = process.env.TTSTORE_ADDON;
  return [
    ...(fromEnv ? [path.resolve(root, fromEnv)] : []),
    path.join(root, 'build', 'cmake', 'Release', 'ttstore.node'),
    path.join(root, 'build', 'Release', 'ttstore.node'),
  ];
}

/**
 * The OpenBLAS kernel set for a CPU with these /proc/cpuinfo flags: SkylakeX with AVX-512 (F, CD, BW,
 * DQ, VL), Haswell with AVX2 and FMA, else null (OpenBLAS's own choice). These are the sets OpenBLAS
 * picks for the CPU models it knows; on models it does not know (OpenBLAS 0.3.21 on some newer Xeons
 * under a hypervisor) it falls back to its SSE3 "Prescott" kernels, 2-3x slower in dgemm and dgemv.
 */
export function blasKernelsFor(flags: readonly string[]): string | null {
  const has = (f: string) => flags.includes(f);
  if (['avx512f', 'avx512cd', 'avx512bw', 'avx512dq', 'avx512vl'].every(has)) return 'SkylakeX';
  if (has('avx2') && has('fma')) return 'Haswell';
  return null;
}

/**
 * Sets OPENBLAS_CORETYPE from the CPU's flags before the addon (and with it OpenBLAS, which reads
 * the variable once, when it loads) is loaded, unless it is set already: an operator's value wins.
 * Returns the value in effect.
 */
export function chooseBlasKernels(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.OPENBLAS_CORETYPE) return env.OPENBLAS_CORETYPE;
  const kernels = blasKernelsFor(cpuFlags());
  if (kernels) env.OPENBLAS_CORETYPE = kernels;
  return kernels;
}

/** The CPU's flags from /proc/cpuinfo on x86-64 Linux; none elsewhere (or when it cannot be read). */
export function cpuFlags(): string[] {
  if (process.platform !== 'linux' || process.arch !== 'x64') return [];
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('flags'));
    return line
      ? line
          .slice(line.indexOf(':') + 1)
          .trim()
          .split(/\s+/)
      : [];
  } catch {
    return [];
  }
}

/**
 * OpenBLAS's settings, made before it loads (it reads them once), each only where the operator has
 * not set it (scripts/openblas-env.sh makes the same ones for the native tests, which link OpenBLAS
 * directly; a test checks that the two agree): the kernel set (chooseBlasKernels) and OPENBLAS_THREAD_TIMEOUT = 20, i.e. its idle
 * worker threads spin about 2^20 cycles (under a millisecond) before they sleep instead of 2^28
 * (about 0.1 s). Spinning that long after every threaded BLAS call takes a core from the engine's
 * own OpenMP threads, and from the other compressions and requests of the service: on 2 cores the
 * median compress of a 16 MiB field went from 57-58 to 36-38 ms, and a put over HTTP from 92-99 to
 * 57-69 ms, while a navier_stokes_2d step (back-to-back BLAS calls) kept its time.
 */
export function configureOpenBlas(env: NodeJS.ProcessEnv = process.env): { coretype: string | null; threadTimeout: string } {
  if (!env.OPENBLAS_THREAD_TIMEOUT) env.OPENBLAS_THREAD_TIMEOUT = '20';
  return { coretype: chooseBlasKernels(env), threadTimeout: env.OPENBLAS_THREAD_TIMEOUT };
}

/** Loads the first addon that exists (synchronous, once per process; the caller caches it). */
export function loadAddon(): NativeAddon {
  configureOpenBlas();
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
