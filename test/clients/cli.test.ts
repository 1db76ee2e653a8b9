// The `ttstore` command line against a real server: piped, --json parses and no progress is drawn; in a
// pseudo-terminal (script(1)) the progress bar shows; exit codes tell failures apart.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { decodeNpy, encodeNpy, ndarray } from '../../clients/typescript/src/npy.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { createTenant } from '../helpers/tenants.js';
import { STORAGE_ENV } from '../storage/helpers.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../clients/typescript/src/cli.js');
const run = promisify(execFile);

describe('clients: the ttstore command line', function () {
  this.timeout(60000);
  let server: TestServer;
  let work: string;
  let env: Record<string, string>;

  /** Runs ttstore piped; resolves with its exit code and output. */
  async function ttstore(...args: string[]): Promise<{ rc: number; out: string; err: string }> {
    try {
      const r = await run(process.execPath, [CLI, ...args], { env, cwd: work });
      return { rc: 0, out: r.stdout, err: r.stderr };
    } catch (e) {
      const x = e as { code: number; stdout: string; stderr: string };
      return { rc: x.code, out: x.stdout, err: x.stderr };
    }
  }
  async function json(...args: string[]): Promise<any> {
    const r = await ttstore('--json', ...args);
    expect(r.rc, r.err).to.equal(0);
    return JSON.parse(r.out);
  }

  before(async () => {
    server = await startServer({ env: STORAGE_ENV, timeoutMs: 60000 });
    work = await mkdtemp(path.join(os.tmpdir(), 'ttstore-cli-'));
    const t = await createTenant(server, { namespaces: ['default', 'cfd'] });
    env = {
      ...(process.env as Record<string, string>),
      TTSTORE_URL: server.url,
      TTSTORE_API_KEY: t.api_key,
      TTSTORE_SERVICE_KEY: server.serviceKey,
    };
  });
  after(async () => {
    await server.destroy();
    await rm(work, { recursive: true, force: true });
  });

  it('put, get, serve, ls, similar, topk, search and rm, with --json that parses and no progress when piped', async () => {
    const a = ndarray(
      Float64Array.from({ length: 4096 }, (_, i) => Math.sin(i / 50)),
      [64, 64],
    );
    await writeFile(path.join(work, 'a.npy'), encodeNpy(a));
    const put = await ttstore('--json', 'put', 'cfd/run/p', 'a.npy', '--domain', 'lossless', '--meta', 'run=7', '--meta', 'tag=x');
    expect(put.err).to.equal('');
    expect(JSON.parse(put.out)).to.include({ key: 'run/p', namespace: 'cfd', version: 1, dtype: 'float64' });
    await json('put', 'cfd/run/q', 'a.npy', '--tolerance', '1e-3', '--meta', 'run=8');
    expect((await json('get', 'cfd/run/p')).metadata).to.deep.equal({ run: 7, tag: 'x' });
    const served = await json('serve', 'cfd/run/p', '-o', 'back.npy');
    expect(served).to.include({ key: 'run/p', version: 1, file: 'back.npy' });
    const back = decodeNpy(new Uint8Array(await readFile(path.join(work, 'back.npy'))));
    expect(Buffer.from(back.data.buffer).equals(Buffer.from(a.data.buffer))).to.equal(true);
    // Parts of the entry: a region, a coarse level, points, as NumPy would slice the array.
    const at = (i: number, j: number) => (back.data as Float64Array)[i * 64 + j]!;
    await json('serve', 'cfd/run/p', '-o', 'part.npy', '--region', '2:10,::-16');
    const part = decodeNpy(new Uint8Array(await readFile(path.join(work, 'part.npy'))));
    expect(part.shape).to.deep.equal([8, 4]);
    for (let i = 0; i < 8; i++) for (let j = 0; j < 4; j++) expect((part.data as Float64Array)[i * 4 + j]).to.equal(at(2 + i, 63 - 16 * j));
    await json('serve', 'cfd/run/p', '-o', 'coarse.npy', '--level', '1', '--region', '5');
    const coarse = decodeNpy(new Uint8Array(await readFile(path.join(work, 'coarse.npy'))));
    expect(coarse.shape).to.deep.equal([1, 32]);
    const mean = (at(10, 6) + at(10, 7) + at(11, 6) + at(11, 7)) / 4;
    expect((coarse.data as Float64Array)[3]).to.be.closeTo(mean, 1e-12 * Math.abs(mean) + 1e-300);
    await json('serve', 'cfd/run/p', '-o', 'points.npy', '--points', '[[1,2],[-1,-1]]');
    expect(Array.from(decodeNpy(new Uint8Array(await readFile(path.join(work, 'points.npy')))).data as Float64Array)).to.deep.equal([
      at(1, 2),
      at(63, 63),
    ]);
    expect((await ttstore('serve', 'cfd/run/p', '-o', 'x.npy', '--region', '1:2:3:4')).rc).to.equal(2);
    expect((await json('ls', 'cfd', '--prefix', 'run/')).keys.map((k: { key: string }) => k.key)).to.deep.equal(['run/p', 'run/q']);
    expect((await json('similar', 'cfd/run/p', 'run/q')).score).to.be.closeTo(1, 1e-3);
    expect((await json('topk', 'cfd/run/p', '-k', '1')).results[0][0]).to.equal('run/q'); // the query itself is left out
    expect((await json('search', 'cfd', '--filter', 'run=8')).results.map((r: { key: string }) => r.key)).to.deep.equal(['run/q']);
    expect(await json('rm', 'cfd/run/q')).to.include({ deleted: true });

    const human = await ttstore('ls', 'cfd');
    expect(human.rc).to.equal(0);
    expect(human.out.split('\n')[0]).to.match(/^key\s+version\s+verdict\s+size\s+stored\s+ratio$/);
    expect(human.out).to.match(/run\/p\s+1\s+\w+\s+32\.0 KiB/);
  });

  it('sim submit --wait, status, list and cancel', async () => {
    const done = await json('sim', 'submit', 'poisson_2d', '--param', 'n_bits=9', '--prefix', 'sim/a', '--wait');
    expect(done.status).to.equal('completed');
    expect((await json('sim', 'status', done.job_id)).status).to.equal('completed');
    expect((await json('sim', 'list', '--status', 'completed')).jobs.map((j: { job_id: string }) => j.job_id)).to.include(done.job_id);
    const cancel = await ttstore('sim', 'cancel', done.job_id);
    expect(cancel.rc, cancel.err).to.equal(5);
    expect(cancel.err).to.match(/job_finished/);
  });

  it("the API key's own usage and namespaces", async () => {
    const own = await json('usage', '--own');
    expect(own.breakdown).to.have.property('put');
    expect((await json('usage', '--own', '--period', '2001-01')).cus_used).to.equal(0);
    expect((await json('namespaces')).namespaces.map((n: { namespace: string }) => n.namespace)).to.deep.equal(['default', 'cfd']);
    expect((await ttstore('namespaces')).out).to.match(/^default\tput /m);
    expect((await ttstore('usage', '--own', 'someone')).rc).to.equal(2);
  });

  it('tenants and usage for the operator', async () => {
    const created = await json('tenants', 'create', 'cli-made', '--plan', 'builder', '--namespace', 'default', '--namespace', 'x');
    expect(created).to.include({ tenant_id: 'cli-made', plan: 'builder' });
    expect((await json('tenants', 'list')).tenants.map((t: { tenant_id: string }) => t.tenant_id)).to.include('cli-made');
    expect((await json('tenants', 'add-namespace', 'cli-made', 'y')).namespaces).to.include('y');
    expect((await json('tenants', 'rotate-key', 'cli-made')).api_key).to.not.equal(created.api_key);
    expect((await json('tenants', 'update-tier', 'cli-made', 'pro')).plan).to.equal('pro');
    expect((await json('usage', 'cli-made')).tenant_id).to.equal('cli-made');
    expect((await json('usage')).tenants).to.be.an('array');
    expect((await json('tenants', 'deactivate', 'cli-made')).active).to.equal(false);
  });

  it('exit codes: usage 2, not found 3, auth 4, network 8; --json prints the problem', async () => {
    expect((await ttstore('bogus')).rc).to.equal(2);
    expect((await ttstore('get', 'no-slash')).rc).to.equal(2);
    const missing = await ttstore('--json', 'get', 'cfd/nothing');
    expect(missing.rc).to.equal(3);
    expect(JSON.parse(missing.out)).to.include({ code: 'not_found', status: 404 });
    expect((await ttstore('--api-key', 'tts_wrong', 'ls', 'cfd')).rc).to.equal(4);
    expect((await ttstore('ls', 'secret')).rc).to.equal(4);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const unreachable = await ttstore('--url', `http://127.0.0.1:${port}`, 'ls', 'cfd');
    expect(unreachable.rc).to.equal(8);
    expect(unreachable.err).to.match(/ECONNREFUSED/);
  });

  it('draws a progress bar in a terminal, and none when piped', async function () {
    const big = ndarray(
      Float64Array.from({ length: 1 << 18 }, (_, i) => Math.cos(i / 300)),
      [512, 512],
    );
    await writeFile(path.join(work, 'big.npy'), encodeNpy(big));
    const piped = await ttstore('put', 'cfd/big', 'big.npy');
    expect(piped.rc, piped.err).to.equal(0);
    expect(piped.err).to.equal('');
    const cmd = [process.execPath, CLI, 'put', 'cfd/big', 'big.npy'].map((s) => `'${s}'`).join(' ');
    const tty = spawnSync('script', ['-qefc', cmd, '/dev/null'], { env, cwd: work, encoding: 'utf8', timeout: 30000 });
    if (tty.error) this.skip();
    expect(tty.status, tty.stdout + tty.stderr).to.equal(0);
    expect(tty.stdout).to.match(/put cfd\/big \[#+\] 100% 2\.00 MiB\/2\.00 MiB/);
    expect(tty.stdout).to.match(/cfd\/big v2: array float64 \[512, 512\]/);
  });
  it('reads the service and keys from a profile when flags and TTSTORE_* say nothing', async () => {
    const file = path.join(work, 'config.json');
    const { TTSTORE_URL, TTSTORE_API_KEY, TTSTORE_SERVICE_KEY, ...rest } = env;
    await writeFile(
      file,
      JSON.stringify({ profiles: { lab: { url: TTSTORE_URL, api_key: TTSTORE_API_KEY, service_key: TTSTORE_SERVICE_KEY } } }),
    );
    const saved = env;
    try {
      env = { ...rest, TTSTORE_CONFIG: file };
      expect((await json('--profile', 'lab', 'ls', 'cfd')).namespace).to.equal('cfd');
      expect((await ttstore('ls', 'cfd')).rc, 'no profile named, no default profile: no URL').to.equal(1);
      expect((await ttstore('--profile', 'nope', 'ls', 'cfd')).rc).to.equal(2);
      env = { ...rest, TTSTORE_CONFIG: file, TTSTORE_PROFILE: 'lab' };
      expect((await json('ls', 'cfd')).namespace).to.equal('cfd');
    } finally {
      env = saved;
    }
  });
});
