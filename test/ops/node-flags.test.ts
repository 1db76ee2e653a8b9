// The service's V8 flags (src/runtime/node-flags.ts): every way the project starts the service passes them
// (npm start, Dockerfile.cuda, the tests' and benchmarks' server), and a process started without
// them says so in its log.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { missingNodeFlags, SERVICE_NODE_FLAGS } from '../../src/runtime/node-flags.js';
import { logRecords, startServer, type TestServer } from '../helpers/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const WARNING = "started without the service's V8 flags";

describe('operations: the service process starts with its V8 flags', function () {
  this.timeout(60000);

  it('starts the old generation at 128 MB', () => {
    expect(SERVICE_NODE_FLAGS).to.deep.equal(['--initial-old-space-size=128']);
  });

  it('names the flags a command line lacks, whatever value it gives them', () => {
    expect(missingNodeFlags([])).to.deep.equal(['--initial-old-space-size=128']);
    expect(missingNodeFlags(['--no-warnings'])).to.deep.equal(['--initial-old-space-size=128']);
    expect(missingNodeFlags(['--initial-old-space-size=256'])).to.deep.equal([]);
    expect(missingNodeFlags(['--initial_old_space_size=128'])).to.deep.equal([]);
  });

  it('npm start and Dockerfile.cuda pass every flag before the entry point', async () => {
    const start: string = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).scripts.start;
    expect(start).to.include(`node ${SERVICE_NODE_FLAGS.join(' ')} dist/src/main.js`);
    const docker = await readFile(path.join(ROOT, 'Dockerfile.cuda'), 'utf8');
    const cmd = /^CMD (\[.*\])$/m.exec(docker);
    expect(cmd, 'a CMD line').to.not.equal(null);
    expect(JSON.parse(cmd![1]!)).to.deep.equal(['node', ...SERVICE_NODE_FLAGS, 'dist/src/main.js']);
  });

  describe('the start-up log', () => {
    const servers: TestServer[] = [];
    after(async () => {
      await Promise.all(servers.map((s) => s.destroy()));
    });

    it("is quiet about flags when the process has them (the tests' server passes them)", async () => {
      const s = await startServer();
      servers.push(s);
      expect(s.logs.join('\n')).to.not.include(WARNING);
    });

    it('warns, naming the missing flag and the command that has it, when started without them', async () => {
      const s = await startServer({ nodeFlags: [] });
      servers.push(s);
      const line = logRecords(s).find((l) => l.msg.includes(WARNING));
      expect(line, s.logs.join('\n')).to.not.equal(undefined);
      expect(line!.level).to.equal(40);
      expect(line!.missing).to.deep.equal(['--initial-old-space-size=128']);
      expect(line!.start_with).to.equal('node --initial-old-space-size=128 dist/src/main.js');
    });
  });
});
