// The admin service key: SVC_GATE_ENGINE_SERVICE_KEY, or one generated at first start into
// <data dir>/service.key (mode 0600). The key itself is never logged; the file's path is.
import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../runtime/log.js';

export const SERVICE_KEY_FILE = 'service.key';

export async function resolveServiceKey(configured: string | undefined, dataDir: string, log: Logger): Promise<string> {
  if (configured !== undefined) return configured;
  const file = path.join(dataDir, SERVICE_KEY_FILE);
  const fresh = `svc_${randomBytes(32).toString('base64url')}`;
  try {
    // 'wx': never overwrite a key another start already made.
    await writeFile(file, `${fresh}\n`, { mode: 0o600, flag: 'wx' });
    await chmod(file, 0o600); // the umask cannot widen it, but be explicit
    log.warn({ path: file }, 'SVC_GATE_ENGINE_SERVICE_KEY is unset: generated a service key into this file (mode 0600)');
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const stored = (await readFile(file, 'utf8')).trim();
  if (stored.length < 16) throw new Error(`service key file ${file} holds no usable key (at least 16 characters)`);
  log.info({ path: file }, 'SVC_GATE_ENGINE_SERVICE_KEY is unset: using the service key kept in this file');
  return stored;
}
