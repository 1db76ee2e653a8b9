import { readFileSync } from 'node:fs';
import { packageRoot } from './paths.js';
import path from 'node:path';

/** The package version from package.json (read once). */
export const VERSION: string = (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
