// CLI entry: `node dist/src/main.js [--help]`. Configuration comes from SVC_GATE_* variables only.
import { ConfigError, helpText, loadConfig } from './config.js';
import { createLogger } from './log.js';
import { startServer } from './server.js';

async function main(): Promise<void> {
  // Engine calls run on libuv's pool, which SQLite and file I/O share: give it room so a few long
  // compressions never starve metadata reads. Must be set before the pool's first use.
  process.env.UV_THREADPOOL_SIZE ??= '16';
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(helpText());
    return;
  }
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`ttstore: configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  const server = await startServer(config, log);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    server.close().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`ttstore: configuration error: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`ttstore: failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
