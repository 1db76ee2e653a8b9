// The backend choice on a machine without a usable GPU (CI, this build machine): the addon loads and
// runs on the CPU whether or not it was built with CUDA, /gate/health says so, serve target gpu is
// refused with the contract's codes, and SVC_GATE_ENGINE_BACKEND=cuda stops start-up with a message
// that names the variable. On a machine with a device these checks are skipped (npm run test:gpu
// covers it).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { engine, native } from '../../src/engine/index.js';
import { http, startServer, type TestServer } from '../helpers/server.js';
import { createTenant } from '../helpers/tenants.js';
import { npyOf } from '../storage/helpers.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/main.js');

function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [MAIN], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    proc.on('exit', (code) => resolve({ code, stderr }));
  });
}

describe('engine backend (no usable GPU here)', function () {
  const info = engine.info();
  before(function () {
    if (info.cudaDevices > 0) this.skip(); // a GPU machine: npm run test:gpu checks the CUDA side
  });

  it('loads and runs on the CPU backend with 0 CUDA devices, whether built with CUDA or not', async () => {
    expect(info.backend).to.equal('cpu');
    expect(info.cudaDevices).to.equal(0);
    expect(info.cudaCompiled).to.be.a('boolean');
    const sel = engine.selectBackend!('auto');
    expect(sel).to.include({ backend: 'cpu', cudaDevices: 0 });
    expect(sel.reason).to.be.a('string').and.not.equal('');
    const x = Float64Array.from({ length: 4096 }, (_, i) => Math.sin(i / 100));
    const r = await engine.compress(x, 'float64', [4096], { tolerance: 1e-6 });
    expect(r.fingerprint.relative_error).to.be.at.most(1e-6);
    expect(engine.info().backend).to.equal('cpu');
  });

  it('refuses the cuda backend with an error that says why', () => {
    expect(() => engine.selectBackend!('cuda'))
      .to.throw(/CUDA/)
      .with.property('code')
      .that.matches(/^ERR_TTS_GPU_UN(AVAILABLE|SUPPORTED)$/);
    expect(engine.info().backend).to.equal('cpu');
  });

  it('reports placement as unsupported or unavailable, never crashes', async () => {
    const tt = { modes: [2, 2], ranks: [1, 1, 1], cores: [Float64Array.of(1, 2), Float64Array.of(3, 4)] };
    const r = await native().gpu.place(0, 1, tt);
    expect(r).to.have.property('error').that.is.oneOf(['gpu_unsupported', 'gpu_unavailable']);
    expect(native().gpu.resident(0, 1)).to.equal(false);
    expect(native().gpu.stats(0)).to.include({ entries: 0, bytes: 0 });
  });

  it('SVC_GATE_ENGINE_BACKEND=cuda stops start-up with a message naming the variable', async function () {
    this.timeout(20000);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-backend-'));
    try {
      const r = await runMain({ SVC_GATE_ENGINE_BACKEND: 'cuda', SVC_GATE_PORT: '0', SVC_GATE_DATA_DIR: dir });
      expect(r.code).to.equal(2);
      expect(r.stderr).to.match(/configuration error: SVC_GATE_ENGINE_BACKEND=cuda: .*CUDA/);
      expect(r.stderr).to.not.match(/\n\s+at /); // a message, not a stack trace
      const bad = await runMain({ SVC_GATE_ENGINE_BACKEND: 'gpu', SVC_GATE_PORT: '0', SVC_GATE_DATA_DIR: dir });
      expect(bad.code).to.equal(2);
      expect(bad.stderr).to.match(/SVC_GATE_ENGINE_BACKEND must be one of auto, cpu, cuda/);
      const budget = await runMain({ SVC_GATE_GPU_CACHE_BYTES: '-1', SVC_GATE_PORT: '0', SVC_GATE_DATA_DIR: dir });
      expect(budget.code).to.equal(2);
      expect(budget.stderr).to.match(/SVC_GATE_GPU_CACHE_BYTES must be an integer in/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('over HTTP', () => {
    let server: TestServer;
    before(async function () {
      this.timeout(20000);
      server = await startServer({ env: { SVC_GATE_ENGINE_BACKEND: 'auto' } });
    });
    after(async () => server?.destroy());

    it('health reports the cpu backend and 0 devices', async () => {
      const h = await http(server.url, 'GET', '/gate/health');
      expect(h.status).to.equal(200);
      expect(h.body.engine).to.include({ backend: 'cpu', cuda_devices: 0 });
    });

    it('serve target gpu: 503 gpu_unavailable on a CUDA build, 501 gpu_unsupported without CUDA', async () => {
      const t = await createTenant(server);
      const auth = { 'X-Api-Key': t.api_key };
      const x = new Float64Array(8192).map((_, i) => Math.cos(i / 300));
      const npy = npyOf('float64', [8192], x);
      const put = await http(server.url, 'POST', '/v1/put', { json: { key: 'f', data_b64: npy.toString('base64') }, headers: auth });
      expect(put.status).to.equal(200);
      const r = await http(server.url, 'POST', '/v1/serve', { json: { key: 'f', target: 'gpu', device: 'cuda:0' }, headers: auth });
      const compiled = engine.info().cudaCompiled === true;
      expect(r.status).to.equal(compiled ? 503 : 501);
      expect(r.body.code).to.equal(compiled ? 'gpu_unavailable' : 'gpu_unsupported');
      expect(r.body.detail).to.match(/cuda:0/);
    });
  });
});
