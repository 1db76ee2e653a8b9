import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${start}`);
    dir = up;
  }
}

/** The repository / package root (code runs from dist/src/..., sources from src/...). */
export const packageRoot: string = findRoot(path.dirname(fileURLToPath(import.meta.url)));
