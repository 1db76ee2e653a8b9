import { expect } from 'chai';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { addonCandidates, engine, packageRoot } from '../../src/engine/index.js';
import { loadAddon } from '../../src/engine/load.js';

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
});
