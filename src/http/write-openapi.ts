// `npm run build:openapi`: writes the OpenAPI document to docs/openapi.json (committed, so the
// reference can be read without running the server). Run after every TypeScript build.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENDPOINTS } from '../routes/index.js';
import { openApiDocument } from './openapi.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const out = path.join(root, 'docs', 'openapi.json');
await mkdir(path.dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(openApiDocument(ENDPOINTS), null, 2)}\n`);
process.stdout.write(`wrote ${path.relative(process.cwd(), out) || out}\n`);
