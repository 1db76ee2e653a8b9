// The console's built files (dist/console, written by `npm run build:console`), read once at start:
// a few hundred KB, answered from memory; a name not in the build is simply absent (no path is joined
// from a request, so nothing outside the folder can be reached).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { packageRoot } from '../../runtime/paths.js';

export const CONSOLE_DIR = path.join(packageRoot(), 'dist', 'console');

export interface ConsoleFile {
  body: Buffer;
  type: string;
  etag: string;
}

export interface ConsoleBuild {
  index: ConsoleFile;
  /** assets/<name> by name. */
  assets: Map<string, ConsoleFile>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

function file(p: string): ConsoleFile {
  const body = readFileSync(p);
  const type = TYPES[path.extname(p)] ?? 'application/octet-stream';
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/** The build under `dir`, or null when the console was not built. */
export function loadConsoleBuild(dir: string = CONSOLE_DIR): ConsoleBuild | null {
  const index = path.join(dir, 'index.html');
  if (!existsSync(index)) return null;
  const assets = new Map<string, ConsoleFile>();
  const assetDir = path.join(dir, 'assets');
  if (existsSync(assetDir)) {
    for (const e of readdirSync(assetDir, { withFileTypes: true })) if (e.isFile()) assets.set(e.name, file(path.join(assetDir, e.name)));
  }
  return { index: file(index), assets };
}
