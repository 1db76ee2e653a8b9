// The repositories (src/store/*.ts) as every engine must implement them: the same cases against
// SQLite and, when TTSTORE_TEST_DATABASE_URL is set, PostgreSQL (shown as pending otherwise). "Nodes"
// here are separate store instances over the same database, each with its own connections, as
// several processes would have.
import { LeaseLost, type NewJob } from '../../src/store/jobs.js';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { NewEntry } from '../../src/store/entries.js';
import { MIGRATIONS as SQLITE_MIGRATIONS, openSqliteStores, type SqliteStores } from '../../src/store/sqlite/index.js';
import { prepared } from '../../src/store/postgres/db.js';
import { openPgStores, type PgStores } from '../../src/store/postgres/index.js';
import { PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import type { Stores } from '../../src/store/stores.js';
import { TEST_DATABASE_URL, testDatabase } from '../helpers/pg.js';

interface Engine {
  name: string;
  available: boolean;
  /** A fresh, empty database; `open` opens one more node over it. */
  create(): Promise<{ open(): Promise<Stores>; destroy(): Promise<void> }>;
  /**
   * Whether nodes may open a fresh database at the same moment. SQLite's switch of a new file to WAL
   * can answer SQLITE_BUSY without waiting, so its nodes (one process in production) open in turn.
   */
  opensAtOnce: boolean;
  /** The rows of schema_migrations ("component@version"), as a node reads them. */
  applied(node: Stores): Promise<string[]>;
}

const APPLIED = "SELECT component || '@' || version AS m FROM schema_migrations ORDER BY component, version";

const ENGINES: Engine[] = [
  {
    name: 'SQLite',
    available: true,
    opensAtOnce: false,
    async create() {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-repo-'));
      return {
        open: () => openSqliteStores(path.join(dir, 'ttstore.db')),
        destroy: () => rm(dir, { recursive: true, force: true }),
      };
    },
    applied: async (node) => (await (node as SqliteStores).db.all<{ m: string }>(APPLIED)).map((r) => r.m),
  },
  {
    name: 'PostgreSQL',
    available: TEST_DATABASE_URL !== undefined,
    opensAtOnce: true,
    async create() {
      const db = await testDatabase();
      return { open: () => openPgStores(db.url), destroy: () => db.drop() };
    },
    applied: async (node) => (await (node as PgStores).db.all<{ m: string }>(APPLIED)).map((r) => r.m),
  },
];

let blobSeq = 0;

/** An entry as a put of `bytes` stored bytes with `metadata` would make it. */
function entry(key: string, metadata: Record<string, unknown> = {}, bytes = 1000): NewEntry {
  const text = JSON.stringify(metadata);
  return {
    key,
    metadata,
    row: {
      kind: 'array',
      dtype: 'float64',
      shape: '[10,10]',
      layout: 'row_major',
      modes: '[]',
      ranks: '[]',
      core_dtype: null,
      verdict: 'passthrough' as NewEntry['row']['verdict'],
      compressed: 0,
      original_bytes: bytes,
      stored_core_bytes: 0,
      frobenius_error: 0,
      max_abs_error: 0,
      relative_error: 0,
      tolerance: 1e-6,
      max_rank_request: null,
      domain: 'generic',
      source: 'put',
      passthrough_reason: 'below_threshold',
      metadata: text,
      norm: 1.5,
      blob_id: (++blobSeq).toString(16).padStart(32, '0'),
      blob_kind: 'raw',
      checksum: '0'.repeat(64),
    },
  };
}

const now = () => 1_700_000_000;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

for (const engine of ENGINES) {
  (engine.available ? describe : describe.skip)(`store: repositories on ${engine.name}`, function () {
    let database: Awaited<ReturnType<Engine['create']>>;
    let nodes: Stores[] = [];
    let s: Stores;

    beforeEach(async () => {
      database = await engine.create();
      // Three nodes starting (at once where the engine allows): each applies what is still pending.
      nodes = [];
      if (engine.opensAtOnce) nodes.push(...(await Promise.all(range(3).map(() => database.open()))));
      else for (const _ of range(3)) nodes.push(await database.open());
      s = nodes[0]!;
    });

    afterEach(async () => {
      await Promise.all(nodes.map((n) => n.close()));
      await database.destroy();
    });

    it('applies each migration once when several nodes start, and none when one starts again', async () => {
      const all = (engine.name === 'SQLite' ? SQLITE_MIGRATIONS : PG_MIGRATIONS).map((m) => `${m.component}@${m.version}`).sort();
      expect(await engine.applied(s)).to.deep.equal(all);
      const again = await database.open();
      nodes.push(again);
      expect(await engine.applied(again)).to.deep.equal(all);
    });

    describe('entries', () => {
      it('numbers the versions of each key from 1 and finds the latest or a given one', async () => {
        await s.entries.insert('t1', 'ns', [entry('a'), entry('b')], now);
        const [a2] = await s.entries.insert('t1', 'ns', [entry('a', { v: 2 })], now);
        expect(a2).to.include({ key: 'a', version: 2, tenant_id: 't1', namespace: 'ns', created_at: now() });
        expect((await s.entries.find('t1', 'ns', 'a'))?.version).to.equal(2);
        expect((await s.entries.find('t1', 'ns', 'a', 1))?.version).to.equal(1);
        expect(await s.entries.find('t1', 'ns', 'a', 3)).to.equal(undefined);
        expect(await s.entries.find('t2', 'ns', 'a')).to.equal(undefined);
        expect(await s.entries.find('t1', 'other', 'a')).to.equal(undefined);
      });

      it('keeps every column of a row as written, infinite errors and a missing norm included', async () => {
        const item = entry('inf', { x: [1, 2] });
        item.row = { ...item.row, max_abs_error: Infinity, relative_error: Infinity, norm: null, max_rank_request: 7 };
        const [row] = await s.entries.insert('t1', 'ns', [item], now);
        expect(await nodes[1]!.entries.find('t1', 'ns', 'inf')).to.deep.equal(row);
        expect(row).to.deep.include({ ...item.row, key: 'inf', version: 1 });
      });

      it('lists the latest versions of keys with a prefix in byte order, metacharacters taken literally', async () => {
        const keys = ['a%b', 'a*c', 'a_b', 'ab', 'aé', 'aZ', 'B', 'a'];
        await s.entries.insert(
          't1',
          'ns',
          keys.map((k) => entry(k)),
          now,
        );
        const all = await s.entries.list('t1', 'ns', '', 100, 0);
        expect(all.rows.map((r) => r.key)).to.deep.equal([...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
        expect(all.total).to.equal(keys.length);
        for (const prefix of ['a%', 'a*', 'a_', 'aé']) {
          const got = await s.entries.list('t1', 'ns', prefix, 100, 0);
          expect(
            got.rows.map((r) => r.key),
            prefix,
          ).to.deep.equal(keys.filter((k) => k.startsWith(prefix)));
        }
        const page = await s.entries.list('t1', 'ns', 'a', 2, 1);
        expect(page.rows.map((r) => r.key)).to.deep.equal(['a%b', 'a*c']);
        expect(page.total).to.equal(7);
        expect(await s.entries.list('t1', 'ns', 'zzz', 10, 0)).to.deep.equal({ rows: [], total: 0 });
      });

      it('hides every version on delete, never reuses a number, and purges what compaction is due', async () => {
        await s.entries.insert('t1', 'ns', [entry('k', {}, 100), entry('k', {}, 200)], now);
        expect(await s.entries.hide('t1', 'ns', 'k', 1_700_000_100)).to.deep.include({ versions: 2 });
        expect(await s.entries.hide('t1', 'ns', 'k', 1_700_000_100)).to.equal(null);
        expect(await s.entries.find('t1', 'ns', 'k')).to.equal(undefined);
        expect(await s.entries.find('t1', 'ns', 'k', 1)).to.equal(undefined);
        const [again] = await s.entries.insert('t1', 'ns', [entry('k', {}, 400)], now);
        expect(again!.version).to.equal(3);
        expect(await s.entries.storedBytesByTenant()).to.deep.equal([{ tenantId: 't1', bytes: 700 }]);

        await s.entries.stampDeleted('all');
        expect(await s.entries.purge({ deletedBefore: 1_700_000_099 }, 10)).to.deep.equal([]);
        const purged = await s.entries.purge({ deletedBefore: 1_700_000_100 }, 10);
        expect(purged.map((p) => p.bytes).sort()).to.deep.equal([100, 200]);
        expect(await s.entries.storedBytesByTenant()).to.deep.equal([{ tenantId: 't1', bytes: 400 }]);
        expect((await s.entries.blobIds()).size).to.equal(1);
        expect((await s.entries.find('t1', 'ns', 'k'))?.version).to.equal(3);
      });

      it('stores nothing and spends no version when the transaction of a write fails', async () => {
        const boom = new Error('also failed');
        let caught: unknown;
        try {
          await s.entries.insert('t1', 'ns', [entry('k')], now, () => Promise.reject(boom));
        } catch (err) {
          caught = err;
        }
        expect(caught).to.equal(boom);
        expect(await s.entries.find('t1', 'ns', 'k')).to.equal(undefined);
        const [row] = await s.entries.insert('t1', 'ns', [entry('k')], now);
        expect(row!.version).to.equal(1);
      });

      it('gives 3 nodes x 20 concurrent puts to one key the versions 1..60, once each', async () => {
        const rows = await Promise.all(nodes.flatMap((n) => range(20).map(() => n.entries.insert('t1', 'ns', [entry('hot')], now))));
        const versions = rows.map((r) => r[0]!.version).sort((a, b) => a - b);
        expect(versions).to.deep.equal(range(60).map((i) => i + 1));
        for (const n of nodes) expect((await n.entries.find('t1', 'ns', 'hot'))?.version).to.equal(60);
      });

      it('selects candidates and metadata matches by JSON equality, in key order', async () => {
        await s.entries.insert(
          't1',
          'ns',
          [
            entry('c', { flag: true, tag: 'x' }),
            entry('a', { flag: 1, tag: 'x' }),
            entry('b', { flag: true, tag: 'x', nested: { q: 1, p: 2 } }),
            entry('d', { flag: true, tag: 'y' }),
          ],
          now,
        );
        const like = { shape: '[10,10]', layout: 'row_major' as const };
        const cands = await s.entries.candidates('t1', 'ns', like, 'c', { flag: true });
        expect(cands.map((c) => c.key)).to.deep.equal(['b', 'd']);
        expect(cands[0]).to.include({ norm: 1.5, bytes: 1000 });
        expect((await s.entries.candidates('t1', 'ns', like, null, {})).map((c) => c.key)).to.deep.equal(['a', 'b', 'c', 'd']);
        expect(await s.entries.candidates('t1', 'ns', { ...like, shape: '[100]' }, null, {})).to.deep.equal([]);

        const found = await s.entries.searchMetadata('t1', 'ns', { tag: 'x', nested: { p: 2, q: 1 } }, 10, 0);
        expect(found.rows.map((r) => r.key)).to.deep.equal(['b']);
        const page = await s.entries.searchMetadata('t1', 'ns', { tag: 'x' }, 1, 1);
        expect(page).to.deep.include({ total: 3 });
        expect(page.rows.map((r) => [r.key, r.version])).to.deep.equal([['b', 1]]);
        expect((await s.entries.searchMetadata('t1', 'ns', {}, 10, 0)).total).to.equal(4);

        const refs = await s.entries.storageRefs(
          't1',
          cands.map((c) => c.id),
        );
        expect(refs.map((r) => r.key).sort()).to.deep.equal(['b', 'd']);
        expect(
          await s.entries.storageRefs(
            't2',
            cands.map((c) => c.id),
          ),
        ).to.deep.equal([]);
      });

      it("keeps each tenant's stored bytes exact under concurrent writes and purges from every node", async () => {
        // 3 nodes x 10 writes each for t1 (sizes 1..30) and t2 (100 each), at once
        await Promise.all(
          nodes.flatMap((n, i) =>
            range(10).flatMap((j) => [
              n.entries.insert('t1', 'ns', [entry(`k${j}`, {}, i * 10 + j + 1)], now),
              n.entries.insert('t2', 'ns', [entry(`k${i}-${j}`, {}, 100)], now),
            ]),
          ),
        );
        expect(await s.entries.storedBytesOfTenant('t1')).to.equal((30 * 31) / 2);
        expect(await s.entries.storedBytesOfTenant('t2')).to.equal(3000);
        // every node purges t2 at once (where nodes share the store; one node of SQLite's), 4 rows at a time
        const purgers = s.entries.shared ? nodes : [s];
        const purged = (
          await Promise.all(
            purgers.map(async (n) => {
              let bytes = 0;
              for (
                let batch = await n.entries.purge({ tenantId: 't2' }, 4);
                batch.length > 0;
                batch = await n.entries.purge({ tenantId: 't2' }, 4)
              )
                bytes += batch.reduce((sum, p) => sum + Number(p.bytes), 0);
              return bytes;
            }),
          )
        ).reduce((a, b) => a + b, 0);
        expect(purged).to.equal(3000);
        expect(await nodes[1]!.entries.storedBytesOfTenant('t2')).to.equal(0);
        expect(await nodes[2]!.entries.storedBytesByTenant()).to.deep.equal([{ tenantId: 't1', bytes: 465 }]);
        expect(await s.entries.storedBytesOfTenant('nobody')).to.equal(0);
      });

      it("purges a tenant's entries and key rows", async () => {
        await s.entries.insert('t1', 'ns', [entry('a'), entry('b')], now);
        await s.entries.insert('t2', 'ns', [entry('a')], now);
        expect(await s.entries.purge({ tenantId: 't1' }, 1)).to.have.length(1);
        expect(await s.entries.purge({ tenantId: 't1' }, 10)).to.have.length(1);
        await s.entries.removeKeys('t1');
        expect((await s.entries.insert('t1', 'ns', [entry('a')], now))[0]!.version).to.equal(1);
        expect((await s.entries.find('t2', 'ns', 'a'))?.version).to.equal(1);
      });
    });

    describe('tenants', () => {
      const tenant = (id: string, keyHash: string) => ({
        tenant_id: id,
        plan: 'starter',
        namespaces: '["default"]',
        email: null,
        key_hash: keyHash,
        rate_limit_requests: null,
        rate_limit_window_s: null,
        monthly_quota: null,
        storage_quota_bytes: null,
        created_at: 1_700_000_000,
      });

      it('refuses a taken id or key, patches active tenants, and keeps deactivated ones as they are', async () => {
        const row = await s.tenants.insert(tenant('t1', 'a'.repeat(64)));
        expect(row).to.include({ tenant_id: 't1', active: 1, key_rotated_at: null });
        expect(await s.tenants.insert(tenant('t1', 'b'.repeat(64)))).to.equal(null);
        expect(await s.tenants.insert(tenant('t2', 'a'.repeat(64)))).to.equal(null);
        const changed = await s.tenants.update('t1', () => ({ key_hash: 'c'.repeat(64), key_rotated_at: 1_700_000_005 }));
        expect(changed).to.have.nested.property('row.key_hash', 'c'.repeat(64));
        expect(await s.tenants.update('nobody', () => ({}))).to.deep.equal({ missing: true });
        expect(await s.tenants.deactivate('t1', 1_700_000_010, 1_700_000_020)).to.include({ active: 0, purge_after: 1_700_000_020 });
        expect(await s.tenants.update('t1', () => ({ plan: 'pro' }))).to.deep.equal({ inactive: true });
        expect(await s.tenants.duePurges(1_700_000_019)).to.deep.equal([]);
        expect(await s.tenants.duePurges(1_700_000_020)).to.deep.equal(['t1']);
        await s.tenants.markPurged('t1', 1_700_000_021);
        expect(await s.tenants.duePurges(1_700_000_030)).to.deep.equal([]);
        expect((await nodes[1]!.tenants.all()).map((t) => t.tenant_id)).to.deep.equal(['t1']);
      });

      it('applies concurrent patches from every node to the row the previous one left', async () => {
        await s.tenants.insert({ ...tenant('t1', 'a'.repeat(64)), rate_limit_requests: 0 });
        const bump = (n: Stores) => n.tenants.update('t1', (cur) => ({ rate_limit_requests: (cur.rate_limit_requests ?? 0) + 1 }));
        await Promise.all(nodes.flatMap((n) => range(10).map(() => bump(n))));
        expect((await s.tenants.all())[0]!.rate_limit_requests).to.equal(30);
      });
    });

    describe('usage', () => {
      it('takes the amounts when the write starts, after add() returned, so later ones can join it', async () => {
        const amounts = [{ tenantId: 't1', period: '2026-11', bucket: 'put', milli: 5 }];
        const written = s.usage.add(() => amounts, 1);
        amounts.push({ tenantId: 't1', period: '2026-11', bucket: 'put', milli: 7 });
        await written;
        expect(await s.usage.totals('2026-11')).to.deep.equal(new Map([['t1', 12]]));
      });

      it('adds the amounts of every node exactly', async () => {
        const flush = (n: Stores, milli: number) =>
          n.usage.add(
            () => [
              { tenantId: 't1', period: '2026-11', bucket: 'put', milli },
              { tenantId: 't1', period: '2026-11', bucket: 'put', milli },
              { tenantId: 't2', period: '2026-11', bucket: 'query', milli: 1 },
            ],
            3,
          );
        await Promise.all(nodes.flatMap((n, i) => range(10).map(() => flush(n, i + 1))));
        expect(await s.usage.totals('2026-11')).to.deep.equal(
          new Map([
            ['t1', 2 * 10 * (1 + 2 + 3)],
            ['t2', 30],
          ]),
        );
        expect(await s.usage.ofTenant('t2', '2026-11')).to.deep.equal([{ tenantId: 't2', period: '2026-11', bucket: 'query', milli: 30 }]);
        expect(await s.usage.ofPeriod('2026-10')).to.deep.equal([]);
      });
    });

    // CU (usage) and stored bytes (entries) are held the same way; `use` turns a hold into usage.
    const QUOTAS = [
      {
        name: 'CU',
        hold: (n: Stores, amount: number, quota: number, expiresAt: number) =>
          n.usage
            .hold({ tenantId: 't1', period: '2026-11', milli: amount, quotaMilli: quota, expiresAt }, Date.now())
            .then((h) => h?.id ?? null),
        unhold: (n: Stores, id: string) => n.usage.unhold(id),
        // The charge moves what it settles out of the holds in the write that adds the usage.
        use: (n: Stores, amount: number, settles: string[]) =>
          n.usage.add(
            () => [
              { tenantId: 't1', period: '2026-11', bucket: 'put', milli: amount, settles: settles.map((id) => ({ id, milli: amount })) },
            ],
            1,
          ),
      },
      {
        name: 'storage',
        hold: (n: Stores, amount: number, quota: number, expiresAt: number) =>
          n.entries.holdStorage({ tenantId: 't1', bytes: amount, quotaBytes: quota, expiresAt }, Date.now()),
        unhold: (n: Stores, id: string) => n.entries.unholdStorage(id),
        // The write commits, then drops its holds (both counted for a moment).
        use: async (n: Stores, amount: number, settles: string[]) => {
          await n.entries.insert('t1', 'ns', [entry(`k${++blobSeq}`, {}, amount)], now);
          for (const id of settles) await n.entries.unholdStorage(id);
        },
      },
    ];

    for (const q of QUOTAS) {
      describe(`${q.name} quota holds`, () => {
        const hold = (n: Stores, amount: number, quota: number, expiresAt = Date.now() + 60_000) => q.hold(n, amount, quota, expiresAt);

        it('grants concurrent holds from every node up to the quota exactly, never past it', async () => {
          // 3 nodes x 20 holds of 7 against 300: demand 420, and 300 is not a multiple of 7.
          const ids = await Promise.all(nodes.flatMap((n) => range(20).map(() => hold(n, 7, 300))));
          const granted = ids.filter((id) => id !== null);
          expect(granted.length).to.equal(Math.floor(300 / 7));
          expect(new Set(granted).size).to.equal(granted.length);
          // Usage counts too: 294 held and 6 used leave nothing.
          await q.use(s, 6, []);
          expect(await hold(nodes[1]!, 1, 300)).to.equal(null);
        });

        it('frees a hold when it is dropped, used or expired', async () => {
          const a = await hold(nodes[0]!, 60, 100);
          expect(a).to.be.a('string');
          expect(await hold(nodes[1]!, 50, 100)).to.equal(null);
          await q.unhold(nodes[0]!, a!);
          const b = await hold(nodes[1]!, 50, 100);
          expect(b).to.be.a('string');
          // Used: the 50 move from the hold to usage, so 50 more fit and no more.
          await q.use(nodes[1]!, 50, [b!]);
          expect(await hold(nodes[2]!, 40, 100, Date.now() + 1)).to.be.a('string');
          await new Promise((r) => setTimeout(r, 5));
          // The 40 expired (a node died mid-request): 50 fit again, then nothing.
          expect(await hold(nodes[0]!, 50, 100)).to.be.a('string');
          expect(await hold(nodes[2]!, 1, 100)).to.equal(null);
        });
      });
    }

    describe('CU quota blocks', () => {
      const hold = (n: Stores, milli: number, blockMilli: number, quotaMilli: number) =>
        n.usage.hold({ tenantId: 't1', period: '2026-12', milli, blockMilli, quotaMilli, expiresAt: Date.now() + 60_000 }, Date.now());

      it("holds a block while another stays free, else the request's own amount; a charge and a give-back free the rest", async () => {
        // 0 used or held: two blocks of 40 fit in 100, so node 0 holds one.
        const a = await hold(nodes[0]!, 1, 40, 100);
        expect(a?.milli).to.equal(40);
        // 40 held: another two would not fit, so node 1 holds only its request's 1.
        expect((await hold(nodes[1]!, 1, 40, 100))?.milli).to.equal(1);
        // Node 0 charges 10 drawn from its block and gives back the 30 it did not draw: 10 used, 1 held.
        await nodes[0]!.usage.add(
          () => [{ tenantId: 't1', period: '2026-12', bucket: 'get', milli: 10, settles: [{ id: a!.id, milli: 10 }] }],
          1,
        );
        await nodes[0]!.usage.shrink(a!.id, 30);
        expect(await hold(nodes[2]!, 90, 90, 100)).to.equal(null);
        expect((await hold(nodes[2]!, 89, 89, 100))?.milli).to.equal(89);
        expect(await hold(nodes[0]!, 1, 1, 100)).to.equal(null);
      });
    });

    describe('jobs', () => {
      const job = (jobId: string, tenantId = 't1') => ({
        jobId,
        tenantId,
        solver: 'heat_1d',
        namespace: 'ns',
        outputKeyPrefix: `runs/${jobId}/`,
        params: { n: 64 },
        stepsTotal: 10,
        createdAt: 1_700_000_000,
      });
      const progress = { steps_completed: 4, steps_total: 10, elapsed_s: 1.5 };
      /** Queue `j` on `node` under a cap these cases never reach. */
      const queue = async (j: NewJob, node = s) => {
        const queued = await node.jobs.insert(j, 100);
        if (queued.outcome !== 'inserted') throw new Error(`${j.jobId} refused: ${queued.queued} queued`);
        return queued.row;
      };

      it('keeps a job per tenant, lists newest first, and lets one node of several start it', async () => {
        expect(await queue(job('j1'))).to.include({ job_id: 'j1', status: 'queued', attempts: 0 });
        await queue(job('j2'));
        await queue(job('j3', 't2'));
        expect(await s.jobs.get('t2', 'j1')).to.equal(undefined);
        expect((await nodes[2]!.jobs.list('t1', { limit: 10 })).map((j) => j.job_id)).to.deep.equal(['j2', 'j1']);
        const started = await Promise.all(nodes.map((n, i) => n.jobs.claim({ owner: `node${i}`, now: 1_700_000_001, leaseS: 30 }, 'j1')));
        const winner = started.findIndex(Boolean);
        expect(started.filter(Boolean)).to.have.length(1);
        const hold = { owner: `node${winner}`, attempt: 1 };
        expect((await s.jobs.list('t1', { limit: 10, status: 'running' })).map((j) => j.job_id)).to.deep.equal(['j1']);
        await s.jobs.markPaused('j1', hold, progress);
        expect(await nodes[1]!.jobs.get('t1', 'j1')).to.include({ status: 'queued', steps_completed: 4, started_at: 1_700_000_001 });
        expect(await s.jobs.insert(job('j9'), 2)).to.deep.equal({ outcome: 'full', queued: 2 }); // a paused job counts
        await s.jobs.markResumed('j1', hold);
        await s.jobs.requeue('j1', { ...hold, attempt: 2 }); // not this run's hold: nothing changes
        expect(await s.jobs.get('t1', 'j1')).to.include({ status: 'running', lease_owner: hold.owner });
        await s.jobs.requeue('j1', hold);
        expect(await s.jobs.get('t1', 'j1')).to.include({ status: 'queued', steps_completed: 0, lease_owner: null, started_at: null });
        expect(await s.jobs.purgeTenant('t1')).to.equal(2);
      });

      it("queues a tenant's concurrent submits from every node up to its cap exactly, and refuses the rest with the count", async () => {
        const cap = 5;
        const outcomes = await Promise.all(nodes.flatMap((n, i) => range(8).map((k) => n.jobs.insert(job(`n${i}-${k}`), cap))));
        const inserted = outcomes.filter((o) => o.outcome === 'inserted');
        expect(inserted).to.have.length(cap);
        expect(outcomes.filter((o) => o.outcome === 'full')).to.deep.equal(Array(3 * 8 - cap).fill({ outcome: 'full', queued: cap }));
        expect(await s.jobs.list('t1', { limit: 100 })).to.have.length(cap);
        expect(await nodes[1]!.jobs.insert(job('other', 't2'), cap)).to.include({ outcome: 'inserted' }); // another tenant's own cap
        // a job that starts leaves the queue: its place is free again
        expect(await s.jobs.claim({ owner: 'A', now: 1_700_000_001, leaseS: 30 })).to.include({ tenant_id: 't1' });
        expect(await nodes[2]!.jobs.insert(job('after'), cap)).to.include({ outcome: 'inserted' });
        expect(await nodes[2]!.jobs.insert(job('over'), cap)).to.deep.equal({ outcome: 'full', queued: cap });
      });

      it('offers per tenant its oldest claimable job, the tenants with the fewest jobs running elsewhere first', async () => {
        for (const id of ['a1', 'a2', 'a3']) await queue(job(id, 'ta'));
        await queue(job('b1', 'tb'));
        const lease = { owner: 'A', now: 1_700_000_001, leaseS: 30 };
        expect(await s.jobs.claim(lease)).to.include({ job_id: 'a1' });
        const seen = async (owner: string) =>
          (await nodes[1]!.jobs.candidates(owner, 1_700_000_002, 10)).map((c) => [c.row.job_id, c.runningElsewhere]);
        expect(await seen('B')).to.deep.equal([
          ['b1', 0],
          ['a2', 1],
        ]);
        expect(await seen('A')).to.deep.equal([
          ['a2', 0],
          ['b1', 0],
        ]);
      });

      it('hands each job of a shared queue to one claimer of several, oldest first', async () => {
        for (const i of range(10)) await queue(job(`j${i}`));
        const taken = await Promise.all(
          nodes.map(async (n, i) => {
            const mine: string[] = [];
            for (let row; (row = await n.jobs.claim({ owner: `node${i}`, now: 1_700_000_001, leaseS: 30 }));) mine.push(row.job_id);
            return mine;
          }),
        );
        expect(taken.flat().sort()).to.deep.equal(range(10).map((i) => `j${i}`));
        for (const mine of taken) expect(mine).to.deep.equal([...mine].sort());
        const rows = await s.jobs.list('t1', { limit: 20 });
        expect(rows.every((r) => r.status === 'running' && r.attempts === 1)).to.equal(true);
      });

      it("gives a job whose holder's lease ran out to another node, from the start, and not before", async () => {
        await queue(job('j1'));
        const [a, b] = nodes as [Stores, Stores];
        expect(await a.jobs.claim({ owner: 'A', now: 1_700_000_000, leaseS: 30 })).to.include({ job_id: 'j1', attempts: 1 });
        const heldByA = { jobId: 'j1', owner: 'A', attempt: 1 };
        await a.jobs.markPaused('j1', heldByA, progress);
        expect(await b.jobs.claim({ owner: 'B', now: 1_700_000_020, leaseS: 30 })).to.equal(undefined);
        expect(await a.jobs.renew({ owner: 'A', now: 1_700_000_020, leaseS: 30 }, [heldByA])).to.deep.equal(['j1']);
        expect(await b.jobs.claim({ owner: 'B', now: 1_700_000_040, leaseS: 30 })).to.equal(undefined);
        const taken = await b.jobs.claim({ owner: 'B', now: 1_700_000_051, leaseS: 30 });
        expect(taken).to.include({ job_id: 'j1', status: 'running', attempts: 2, steps_completed: 0, started_at: 1_700_000_051 });
        expect(await a.jobs.renew({ owner: 'A', now: 1_700_000_052, leaseS: 30 }, [heldByA])).to.deep.equal([]);
        expect(await a.jobs.claim({ owner: 'A', now: 1_700_000_060, leaseS: 30 })).to.equal(undefined);
        // A's run was taken over: it can neither complete nor fail the job
        const refused = (p: Promise<unknown>) =>
          p.then(
            () => null,
            (err: unknown) => err,
          );
        expect(
          await refused(
            s.entries.insert('t1', 'ns', [entry('runs/j1/0')], now, (tx) =>
              a.jobs.markCompleted(tx, 'j1', heldByA, { finishedAt: 1_700_000_061, progress, outputs: ['runs/j1/0'], stats: {} }),
            ),
          ),
        ).to.be.instanceOf(LeaseLost);
        expect(await s.entries.find('t1', 'ns', 'runs/j1/0')).to.equal(undefined); // rolled back with it
        expect(await refused(a.jobs.markFailed('j1', { finishedAt: 1_700_000_061, progress, error: {} }, heldByA))).to.be.instanceOf(
          LeaseLost,
        );
        expect(await s.jobs.get('t1', 'j1')).to.include({ status: 'running', lease_owner: 'B', attempts: 2 });
      });

      it('keeps the run-time periods a job paid for across its runs: written by its holder only, never lowered', async () => {
        await queue(job('j1'));
        await s.jobs.claim({ owner: 'A', now: 1_700_000_001, leaseS: 30 }, 'j1');
        const hold = { owner: 'A', attempt: 1 };
        await s.jobs.markCharged('j1', hold, 3);
        await s.jobs.markCharged('j1', hold, 2); // a late write of an earlier period
        await nodes[1]!.jobs.markCharged('j1', { owner: 'B', attempt: 1 }, 9); // not the holder
        expect(await s.jobs.get('t1', 'j1')).to.include({ charged_periods: 3 });
        await s.jobs.requeue('j1', hold);
        const again = await nodes[1]!.jobs.claim({ owner: 'B', now: 1_700_000_002, leaseS: 30 });
        expect(again).to.include({ attempts: 2, steps_completed: 0, charged_periods: 3 });
      });

      it('completes a job in the transaction that stores its outputs, and fails one with a problem', async () => {
        await queue(job('j1'));
        await queue(job('j2'));
        const hold = { owner: 'A', attempt: 1 };
        await s.jobs.claim({ owner: 'A', now: 1_700_000_001, leaseS: 30 }, 'j1');
        await s.entries.insert('t1', 'ns', [entry('runs/j1/0')], now, (tx) =>
          s.jobs.markCompleted(tx, 'j1', hold, { finishedAt: 1_700_000_009, progress, outputs: ['runs/j1/0'], stats: { steps: 4 } }),
        );
        expect(await nodes[1]!.jobs.get('t1', 'j1')).to.include({
          status: 'completed',
          outputs: '["runs/j1/0"]',
          finished_at: 1_700_000_009,
        });
        expect(await s.jobs.markFailed('j2', { finishedAt: 1_700_000_010, progress, error: { code: 'solver_diverged' } })).to.equal(true);
        expect(await s.jobs.get('t1', 'j2')).to.include({ status: 'failed', error: '{"code":"solver_diverged"}', outputs: null });
        await s.jobs.requeue('j2', hold);
        expect((await s.jobs.get('t1', 'j2'))?.status).to.equal('failed');
      });

      it('cancels from any node: a queued job fails at once, a held one is asked of its holder', async () => {
        for (const id of ['j1', 'j2', 'j3']) await queue(job(id));
        await s.jobs.claim({ owner: 'A', now: 1_700_000_001, leaseS: 30 }, 'j1');
        const failedAt = { finishedAt: 1_700_000_002, progress, error: { code: 'cancelled' } };
        expect(await nodes[1]!.jobs.markFailed('j1', failedAt)).to.equal(false); // held by A
        await nodes[1]!.jobs.requestCancel('j1', 'cancelled by the tenant');
        expect(await s.jobs.cancelRequests('A')).to.deep.equal([{ jobId: 'j1', detail: 'cancelled by the tenant' }]);
        expect(await s.jobs.cancelRequests('B')).to.deep.equal([]);
        await nodes[2]!.jobs.cancelTenant('t1', 'deactivated', 1_700_000_003, { code: 'cancelled' });
        expect((await s.jobs.list('t1', { limit: 10 })).map((j) => [j.job_id, j.status])).to.deep.equal([
          ['j3', 'failed'],
          ['j2', 'failed'],
          ['j1', 'running'],
        ]);
        expect(await s.jobs.cancelRequests('A')).to.deep.equal([{ jobId: 'j1', detail: 'deactivated' }]);
      });
    });
  });
}

(TEST_DATABASE_URL !== undefined ? describe : describe.skip)('store: PostgreSQL statements', () => {
  it('names a prepared statement by its text alone', () => {
    expect(prepared('SELECT 1').name).to.equal(prepared('SELECT 1').name);
    expect(prepared('SELECT 1').name).to.not.equal(prepared('SELECT 2').name);
  });

  it('parses the usage write once per connection, however many writes it runs', async () => {
    const db = await testDatabase();
    const node = await openPgStores(db.url, undefined, 1); // one connection: every write on it
    try {
      for (const milli of [5, 7, 11]) await node.usage.add(() => [{ tenantId: 't1', period: '2026-11', bucket: 'get', milli }], 1);
      expect(await node.usage.totals('2026-11')).to.deep.equal(new Map([['t1', 23]]));
      const rows = await node.db.all<{ statement: string }>("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'ttstore_%'");
      expect(rows).to.have.length(1);
      expect(rows[0]!.statement).to.match(/INSERT INTO gate_usage/);
    } finally {
      await node.close();
      await db.drop();
    }
  });
});
