// Configuration: every SVC_GATE_* variable parsed in one place with its type and range; a bad value
// stops start-up naming the variable; --help lists every variable with its default.
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { ConfigError, loadConfig, SPECS, unknownVariables } from '../../src/config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');
const run = promisify(execFile);

const CONTRACT_SECTION_7 = [
  'SVC_GATE_HOST',
  'SVC_GATE_PORT',
  'SVC_GATE_DATA_DIR',
  'SVC_GATE_ENGINE_SERVICE_KEY',
  'SVC_GATE_DEFAULT_RATE_LIMIT_REQUESTS',
  'SVC_GATE_DEFAULT_RATE_LIMIT_WINDOW_S',
  'SVC_GATE_ENTERPRISE_MONTHLY_QUOTA',
  'SVC_GATE_MAX_PAYLOAD_BYTES',
  'SVC_GATE_COMPRESSION_THRESHOLD_BYTES',
  'SVC_GATE_RETENTION_DAYS',
  'SVC_GATE_SIM_CONCURRENCY',
];
const ADDED = [
  'SVC_GATE_CORE_CACHE_BYTES',
  'SVC_GATE_LOG_LEVEL',
  'SVC_GATE_SHUTDOWN_GRACE_S',
  'SVC_GATE_ENGINE_THREADS',
  'SVC_GATE_DATABASE_URL',
];

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('operations: configuration', () => {
  it('knows every variable of CONTRACT.md section 7 and the ones the service adds', () => {
    const names = Object.values(SPECS).map((s) => s.name);
    expect(names).to.include.members([...CONTRACT_SECTION_7, ...ADDED]);
  });

  it('fills the documented defaults', () => {
    const c = loadConfig({});
    expect(c).to.include({
      host: '127.0.0.1',
      port: 8080,
      defaultRateLimitRequests: 100,
      defaultRateLimitWindowS: 60,
      enterpriseMonthlyQuota: 10_000_000,
      maxPayloadBytes: 268_435_456,
      compressionThresholdBytes: 4096,
      retentionDays: 30,
      simConcurrency: 1,
      logLevel: 'info',
      shutdownGraceS: 10,
      engineThreads: 0,
    });
    expect(c.dataDir).to.equal(path.resolve('./data'));
    expect(c.serviceKey).to.equal(undefined);
    expect(c.roles).to.deep.equal({ api: true, worker: true });
  });

  it('reads SVC_GATE_ROLES as the roles listed', () => {
    expect(loadConfig({ SVC_GATE_ROLES: 'api' }).roles).to.deep.equal({ api: true, worker: false });
    expect(loadConfig({ SVC_GATE_ROLES: ' worker ' }).roles).to.deep.equal({ api: false, worker: true });
  });

  const bad: Array<[string, string]> = [
    ['SVC_GATE_PORT', '70000'],
    ['SVC_GATE_PORT', '80x'],
    ['SVC_GATE_HOST', 'not a host'],
    ['SVC_GATE_ENGINE_SERVICE_KEY', 'short'],
    ['SVC_GATE_DEFAULT_RATE_LIMIT_REQUESTS', '0'],
    ['SVC_GATE_DEFAULT_RATE_LIMIT_WINDOW_S', '1.5'],
    ['SVC_GATE_ENTERPRISE_MONTHLY_QUOTA', '-1'],
    ['SVC_GATE_MAX_PAYLOAD_BYTES', '0'],
    ['SVC_GATE_COMPRESSION_THRESHOLD_BYTES', 'big'],
    ['SVC_GATE_RETENTION_DAYS', '-3'],
    ['SVC_GATE_SIM_CONCURRENCY', '0'],
    ['SVC_GATE_CORE_CACHE_BYTES', '1e9'],
    ['SVC_GATE_LOG_LEVEL', 'loud'],
    ['SVC_GATE_SHUTDOWN_GRACE_S', '-1'],
    ['SVC_GATE_ENGINE_THREADS', 'all'],
    ['SVC_GATE_ROLES', 'api,wroker'],
    ['SVC_GATE_ROLES', 'api,api'],
  ];
  for (const [name, value] of bad) {
    it(`refuses ${name}=${value} with a message naming the variable`, () => {
      expect(configError({ [name]: value })).to.include(name);
    });
  }

  it('stops start-up with exit code 2 and the variable named on stderr', async () => {
    const child = spawn(process.execPath, [MAIN], {
      env: { ...process.env, SVC_GATE_SHUTDOWN_GRACE_S: 'soon', SVC_GATE_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).to.equal(2);
    expect(stderr).to.match(/configuration error: SVC_GATE_SHUTDOWN_GRACE_S must be an integer/);
  });

  it('names SVC_GATE_* variables that nothing reads', () => {
    expect(unknownVariables({ SVC_GATE_PORTT: '1', SVC_GATE_PORT: '1', OTHER: 'x' })).to.deep.equal(['SVC_GATE_PORTT']);
  });

  // npm start runs scripts/setup.sh first: a second after `npm test`'s own set-up, longer when the
  // TypeScript build is stale (it then rebuilds).
  it('lists every variable with its default under --help, also through npm start', async function () {
    this.timeout(240000);
    const direct = (await run(process.execPath, [MAIN, '--help'])).stdout;
    const viaNpm = (await run('npm', ['start', '--silent', '--', '--help'], { cwd: ROOT })).stdout;
    for (const out of [direct, viaNpm]) {
      for (const spec of Object.values(SPECS)) {
        expect(out).to.match(new RegExp(`${spec.name}\\s.*\\(default: ${spec.defaultText.replace(/[()]/g, '\\$&')}\\)`));
      }
    }
  });
});
