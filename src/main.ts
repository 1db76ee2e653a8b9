// CLI entry: `node dist/src/main.js [--help]`. Configuration comes from SVC_GATE_* variables only.
import { ConfigError, helpText, loadConfig, unknownVariables } from './config.js';
import { createLogger } from './runtime/log.js';
import { missingNodeFlags, SERVICE_NODE_FLAGS } from './runtime/node-flags.js';
import { applyMallocSettings, MALLOC_SETTINGS } from './runtime/process-memory.js';
import { startServer, type RunningServer } from './server.js';

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
  const unknown = unknownVariables();
  if (unknown.length > 0) log.warn({ variables: unknown }, 'ignoring unknown SVC_GATE_* variables (see --help for the known ones)');
  const missing = missingNodeFlags();
  if (missing.length > 0) {
    log.warn(
      { missing, start_with: `node ${SERVICE_NODE_FLAGS.join(' ')} dist/src/main.js` },
      "started without the service's V8 flags (npm start passes them): large puts run a full GC each",
    );
  }
  if (!applyMallocSettings()) {
    log.info({ settings: MALLOC_SETTINGS }, 'not glibc: the C allocator keeps its own policy for returning freed memory');
  }
  // Signal handlers go in before start-up: a SIGTERM that arrives while the server starts must stop
  // it cleanly too, not kill it with the default action.
  let server: RunningServer | null = null;
  let stopping: string | null = null;
  const shutdown = (running: RunningServer) => {
    // Past the grace period plus room for the stores to close, something is stuck: give up loudly.
    setTimeout(
      () => {
        log.error({ delay_s: config.shutdownDelayS, grace_s: config.shutdownGraceS }, 'shutdown did not finish in time; exiting');
        process.exit(1);
      },
      (config.shutdownDelayS + config.shutdownGraceS + 10) * 1000,
    ).unref();
    running.close().then(
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
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal during shutdown: exiting now');
      process.exit(1);
    }
    stopping = signal;
    log.info(
      { signal, delay_s: config.shutdownDelayS, grace_s: config.shutdownGraceS },
      'shutting down: no new connections (after delay_s of draining); in-flight requests finish',
    );
    if (server) shutdown(server);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  server = await startServer(config, log);
  if (stopping) shutdown(server);
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`ttstore: configuration error: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`ttstore: failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
