import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { addonCandidates, engine, packageRoot } from '../../src/engine/index.js';
import { blasKernelsFor, chooseBlasKernels, configureOpenBlas, cpuFlags, loadAddon } from '../../src/engine/load.js';

describe('engine: loading the addon', function () {
  it('finds the package root from the compiled module and looks in the documented places, in order', function () {
    const root = packageRoot();
    expect(existsSync(path.join(root, 'package.json'))).to.equal(true);
    const saved = process.env.TTSTORE_ADDON;
    try {
      process.env.TTSTORE_ADDON = 'custom/ttstore.node';
      expect(addonCandidates(root)).to.deep.equal([
        path.join(root, 'custom', 'ttstore.node'),
        path.join(root, 'build', 'cmake', 'Release', 'ttstore.node'),
        path.join(root, 'build', 'Release', 'ttstore.node'),
      ]);
      process.env.TTSTORE_ADDON = path.join(root, 'no-such-dir', 'ttstore.node');
      expect(() => loadAddon()).to.throw(/TTSTORE_ADDON=.*no such file/);
    } finally {
      if (saved === undefined) delete process.env.TTSTORE_ADDON;
      else process.env.TTSTORE_ADDON = saved;
    }
  });

  it('reports backend facts', function () {
    const info = engine.info();
    expect(info.backend).to.be.oneOf(['cpu', 'cuda']);
    expect(info.version).to.be.a('string').and.not.equal('');
    expect(info.blas).to.be.a('string');
    expect(info.threads).to.be.at.least(1);
    expect(info.cudaDevices).to.be.at.least(0);
  });

  it("picks the OpenBLAS kernel set from the CPU flags, and an operator's OPENBLAS_CORETYPE wins", function () {
    const avx512 = ['sse3', 'avx', 'avx2', 'fma', 'avx512f', 'avx512cd', 'avx512bw', 'avx512dq', 'avx512vl'];
    expect(blasKernelsFor(avx512)).to.equal('SkylakeX');
    expect(blasKernelsFor(avx512.filter((f) => f !== 'avx512vl'))).to.equal('Haswell');
    expect(blasKernelsFor(['sse3', 'avx', 'avx2', 'fma'])).to.equal('Haswell');
    expect(blasKernelsFor(['sse3', 'avx', 'avx2'])).to.equal(null);
    expect(blasKernelsFor([])).to.equal(null);
    expect(chooseBlasKernels({ OPENBLAS_CORETYPE: 'Zen' })).to.equal('Zen');
    const env: NodeJS.ProcessEnv = {};
    const chosen = chooseBlasKernels(env);
    expect(env.OPENBLAS_CORETYPE).to.equal(chosen ?? undefined);
  });

  it("shortens OpenBLAS's idle spin unless the operator set it, and sets the kernels with it", function () {
    const env: NodeJS.ProcessEnv = {};
    expect(configureOpenBlas(env).threadTimeout).to.equal('20');
    expect(env.OPENBLAS_THREAD_TIMEOUT).to.equal('20');
    expect(env.OPENBLAS_CORETYPE).to.equal(blasKernelsFor(cpuFlags()) ?? undefined);
    const set: NodeJS.ProcessEnv = { OPENBLAS_THREAD_TIMEOUT: '28', OPENBLAS_CORETYPE: 'Haswell' };
    expect(configureOpenBlas(set)).to.deep.equal({ coretype: 'Haswell', threadTimeout: '28' });
    // the process that loaded the addon has it set
    engine.info();
    expect(process.env.OPENBLAS_THREAD_TIMEOUT).to.be.a('string').and.not.equal('');
  });

  it('sets the same OpenBLAS settings for the native tests (scripts/openblas-env.sh) as for the addon', function () {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.OPENBLAS_CORETYPE;
    delete env.OPENBLAS_THREAD_TIMEOUT;
    const script = path.join(packageRoot(), 'scripts', 'openblas-env.sh');
    const show = ['sh', '-c', 'printf "%s %s" "$OPENBLAS_CORETYPE" "$OPENBLAS_THREAD_TIMEOUT"'];
    const run = (extra: NodeJS.ProcessEnv) => spawnSync('sh', [script, ...show], { env: { ...env, ...extra }, encoding: 'utf8' }).stdout;
    const ours = configureOpenBlas({});
    expect(run({})).to.equal(`${ours.coretype ?? ''} ${ours.threadTimeout}`);
    expect(run({ OPENBLAS_CORETYPE: 'Zen', OPENBLAS_THREAD_TIMEOUT: '28' })).to.equal('Zen 28');
  });

  it('runs OpenBLAS on the kernels of this CPU, not the SSE3 fallback', function () {
    const want = process.env.OPENBLAS_CORETYPE ?? blasKernelsFor(cpuFlags());
    // Only a DYNAMIC_ARCH build (Debian's) chooses its kernels at load time, from OPENBLAS_CORETYPE.
    if (!want || !/OpenBLAS.*DYNAMIC_ARCH/.test(engine.info().blas)) this.skip();
    expect(engine.info().blas).to.match(new RegExp(`\\(${want}\\)`, 'i'));
  });
});
