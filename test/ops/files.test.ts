// Files (CONTRACT.md section 8): a data directory the server creates is 0700 and every file it creates
// in it (database, -wal and -shm journal, blobs, the generated service key) is 0600, whatever the
// umask; an existing directory keeps its mode.
import { expect } from 'chai';
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { http, startServer, type TestServer } from '../helpers/server.js';
import { createTenant, tenantHeaders } from '../helpers/tenants.js';

const modeOf = async (p: string): Promise<number> => (await stat(p)).mode & 0o777;

/** Start a server on `dataDir` with a umask that would leave everything open (0): only explicit modes count. */
async function startOpen(dataDir: string, env: Record<string, string> = {}): Promise<TestServer> {
  const umask = process.umask(0);
  try {
    return await startServer({ dataDir, env });
  } finally {
    process.umask(umask);
  }
}

/** Every file under `dir`, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else out.push(p);
  }
  return out;
}

describe('files: the data directory and what the server writes in it are private', function () {
  this.timeout(60000);
  let base: string;

  before(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'ttstore-files-'));
  });
  after(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('a data directory it creates is 0700; the database, its journal, the blobs and a generated service key are 0600', async () => {
    const dataDir = path.join(base, 'made', 'by-server');
    const server = await startOpen(dataDir, { SVC_GATE_ENGINE_SERVICE_KEY: '' });
    try {
      const serviceKey = (await readFile(path.join(dataDir, 'service.key'), 'utf8')).trim();
      const t = await createTenant({ url: server.url, serviceKey });
      const put = await http(server.url, 'POST', '/v1/put', {
        json: { key: 'k', data_b64: Buffer.alloc(10_000, 7).toString('base64') },
        headers: tenantHeaders(t),
      });
      expect(put.status, put.text).to.equal(200);
      expect(await modeOf(dataDir)).to.equal(0o700);
      expect(await modeOf(path.join(dataDir, 'blobs'))).to.equal(0o700);
      expect(await modeOf(path.join(dataDir, 'blobs', '00'))).to.equal(0o700);
      const files = await filesUnder(dataDir);
      for (const name of ['ttstore.db', 'ttstore.db-wal', 'ttstore.db-shm', 'service.key'])
        expect(files).to.include(path.join(dataDir, name));
      expect(files.filter((f) => f.endsWith('.blob'))).to.have.length(1);
      for (const f of files) expect((await modeOf(f)).toString(8), f).to.equal('600');
    } finally {
      await server.stop();
    }
  });

  it('an existing data directory keeps its mode; the files made in it are still 0600', async () => {
    const dataDir = path.join(base, 'given');
    await mkdir(dataDir, { mode: 0o755 });
    const server = await startOpen(dataDir);
    try {
      expect((await modeOf(dataDir)).toString(8)).to.equal('755');
      for (const name of ['ttstore.db', 'ttstore.db-wal', 'ttstore.db-shm'])
        expect((await modeOf(path.join(dataDir, name))).toString(8), name).to.equal('600');
    } finally {
      await server.stop();
    }
  });
});
