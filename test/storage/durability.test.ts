import { expect } from 'chai';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import type { TestServer } from '../helpers/server.js';
import { b64, bytesOf, clientFor, npyOf, rng, startStorageServer, tenantClient, type Client } from './helpers.js';

interface Sent {
  key: string;
  bytes: Buffer; // what serve must give back (array data, or the blob)
  kind: 'array' | 'blob';
}

function integrityCheck(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => {
      if (err) return reject(err);
      db.all('PRAGMA integrity_check', (e, rows: Array<{ integrity_check: string }>) => {
        db.close();
        if (e) reject(e);
        else resolve(rows.map((r) => r.integrity_check).join('; '));
      });
    });
  });
}

function countRows(file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => {
      if (err) return reject(err);
      db.get('SELECT COUNT(*) AS n FROM entries', (e, row: { n: number }) => {
        db.close();
        if (e) reject(e);
        else resolve(row.n);
      });
    });
  });
}

async function countBlobs(dataDir: string): Promise<{ blobs: number; temps: number }> {
  let blobs = 0;
  let temps = 0;
  const root = path.join(dataDir, 'blobs');
  for (const sub of await readdir(root)) {
    for (const f of await readdir(path.join(root, sub))) {
      if (f.endsWith('.blob')) blobs++;
      if (f.endsWith('.tmp')) temps++;
    }
  }
  return { blobs, temps };
}

/** Payload i: blobs (passthrough), exactly compressible int32 arrays, noisy float32 arrays (passthrough). */
function payload(i: number): Sent & { data_b64: string } {
  const r = rng(1000 + i);
  const key = `dur/${String(i).padStart(4, '0')}`;
  if (i % 3 === 0) {
    const bytes = Buffer.from(Array.from({ length: 200 + (i % 7) * 1000 }, () => Math.floor(r() * 256)));
    bytes[0] = 1;
    return { key, kind: 'blob', bytes, data_b64: bytes.toString('base64') };
  }
  if (i % 3 === 1) {
    const a = new Int32Array(64 * 64).map((_, j) => ((j >> 6) % 4) * 10 + i);
    return { key, kind: 'array', bytes: bytesOf(a), data_b64: b64(npyOf('int32', [64, 64], a)) };
  }
  const f = new Float32Array(32 * 32).map(() => r());
  return { key, kind: 'array', bytes: bytesOf(f), data_b64: b64(npyOf('float32', [32, 32], f)) };
}

describe('storage: durability across SIGKILL', function () {
  this.timeout(180000);
  let server: TestServer | null = null;
  let dataDir = '';
  after(async () => {
    await server?.stop('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps every put that answered 200, byte for byte, with no half-written entry and a sound database', async () => {
    server = await startStorageServer();
    dataDir = server.dataDir;
    const c: Client = await tenantClient(server);
    const answered = new Map<string, Sent & { version: number }>();
    let next = 0;
    let killed = false;
    const TOTAL = 400;
    const KILL_AFTER = 120;

    const worker = async () => {
      while (!killed && next < TOTAL) {
        const p = payload(next++);
        try {
          const r = await c.put({ key: p.key, data_b64: p.data_b64 });
          if (r.status === 200) answered.set(p.key, { ...p, version: r.body.version });
          else if (!killed) throw new Error(`put ${p.key}: ${r.status} ${r.text}`);
        } catch (err) {
          if (!killed) throw err; // connection errors are expected only after the kill
        }
        if (!killed && answered.size >= KILL_AFTER) {
          killed = true;
          server!.proc.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 12 }, worker));
    expect(killed).to.equal(true);
    await server.stop('SIGKILL');
    expect(answered.size).to.be.at.least(KILL_AFTER);

    // Restart on the same data directory: start-up sweeps orphans and temp files.
    server = await startStorageServer({ dataDir });
    const again = clientFor(server, c.apiKey, c.tenantId);
    for (const sent of answered.values()) {
      const got = await again.call('GET', `/v1/get/default/${encodeURIComponent(sent.key)}`);
      expect(got.status, sent.key).to.equal(200);
      expect(got.body.version).to.equal(sent.version);
      const back = await again.dense(sent.key);
      expect(back.data.equals(sent.bytes), `${sent.key} (${got.body.verdict})`).to.equal(true);
    }
    // Every entry that exists (answered or not) is whole: it serves, and it is one of ours.
    const list = await again.call('GET', '/v1/list/default?prefix=dur%2F&limit=10000');
    expect(list.body.total).to.be.at.least(answered.size);
    for (const item of list.body.keys as Array<{ key: string }>) {
      const i = Number(item.key.slice(4));
      const back = await again.dense(item.key);
      expect(back.data.equals(payload(i).bytes), item.key).to.equal(true);
    }
    await server.stop('SIGTERM');
    const files = await countBlobs(dataDir);
    expect(files.temps).to.equal(0);
    expect(files.blobs).to.equal(await countRows(path.join(dataDir, 'ttstore.db')));
    expect(await integrityCheck(path.join(dataDir, 'ttstore.db'))).to.equal('ok');
    server = null;
  });
});
