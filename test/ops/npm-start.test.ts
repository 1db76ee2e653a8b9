// `npm start` runs the server without a shell left in between (exec), so a SIGTERM to npm (what a
// supervisor or a container runtime sends) reaches the server, which closes its port and exits.
// The start script is the one in package.json; only scripts/setup.sh is stood in for (it would build).
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

describe('operations: npm start', function () {
  this.timeout(60000);
  let dir: string;
  let group: number | undefined; // npm's process group: whatever it started goes with it, even on failure

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-npm-start-'));
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    await writeFile(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'ttstore-start-check', private: true, scripts: { start: pkg.scripts.start } }),
    );
    await mkdir(path.join(dir, 'scripts'));
    await writeFile(path.join(dir, 'scripts', 'setup.sh'), 'exit 0\n');
    for (const name of ['dist', 'node_modules', 'build']) await symlink(path.join(ROOT, name), path.join(dir, name));
  });
  after(async () => {
    if (group !== undefined) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        /* all gone */
      }
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('a SIGTERM to npm stops the server: its port closes and npm exits', async () => {
    const env = {
      ...process.env,
      SVC_GATE_HOST: '127.0.0.1',
      SVC_GATE_PORT: '0',
      SVC_GATE_DATA_DIR: path.join(dir, 'data'),
      SVC_GATE_ENGINE_SERVICE_KEY: 'svc_npm_start_test_key_0123456789',
      SVC_GATE_LOG_LEVEL: 'info',
    };
    const npm = spawn('npm', ['start', '--silent'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    group = npm.pid;
    const exited = new Promise<number | string | null>((resolve) => npm.once('exit', (code, sig) => resolve(code ?? sig)));
    const logs: string[] = [];
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "listening" in time:\n${logs.join('\n')}`)), 30000);
      let buf = '';
      npm.stdout!.on('data', (chunk: Buffer) => {
        const lines = (buf + chunk.toString('utf8')).split('\n');
        buf = lines.pop()!;
        for (const line of lines) {
          logs.push(line);
          const m = /"msg":"listening"/.test(line) ? /"port":(\d+)/.exec(line) : null;
          if (m) {
            clearTimeout(timer);
            resolve(Number(m[1]));
          }
        }
      });
      npm.stderr!.on('data', (c: Buffer) => logs.push(c.toString('utf8')));
      void exited.then((code) => reject(new Error(`npm exited (${code}) before listening:\n${logs.join('\n')}`)));
    });
    expect(await listening(port)).to.equal(true);

    npm.kill('SIGTERM');
    await exited;
    let open = true;
    for (let i = 0; i < 100 && open; i++) {
      open = await listening(port);
      if (open) await new Promise((r) => setTimeout(r, 100));
    }
    expect(open, `port ${port} still open 10 s after npm exited:\n${logs.join('\n')}`).to.equal(false);
  });
});
