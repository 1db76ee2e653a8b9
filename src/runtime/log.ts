// Structured logs (pino, one JSON object per line). Credentials never reach a log line.
import { pino, type Logger } from 'pino';

export type { Logger };

// Request lines never carry headers or bodies; these paths are the second line of defence for any
// object that might (an error with its request, a record with its key).
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  'api_key',
  '*.api_key',
  '*.*.api_key',
  'apiKey',
  '*.apiKey',
  'serviceKey',
  '*.serviceKey',
  'service_key',
  '*.service_key',
  'authorization',
  'x-api-key',
];

// pino's isoTime formats a Date per line; lines of one millisecond (a burst of requests) share one.
let stampedMs = -1;
let stamp = '';
function TIMESTAMP(): string {
  const now = Date.now();
  if (now !== stampedMs) {
    stampedMs = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'ttstore' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: TIMESTAMP,
    },
    destination as never,
  );
}

/** The fields of the one line per request (src/http/app.ts): ids, route template, status, timing, CU. */
export interface RequestRecord {
  requestId: string;
  /** Absent (left out of the line) when the request carried no valid tenant key. */
  tenantId: string | undefined;
  method: string;
  /** The matched route template, null when no route matched. */
  route: string | null;
  status: number;
  durationMs: number;
  cu: number;
}

/** Writes the `request` lines; `write` is a no-op while `log` is above info. */
export interface RequestLog {
  write(r: RequestRecord): void;
}

const num = (v: number): string => (Number.isFinite(v) ? String(v) : 'null');

/**
 * The line pino would print for `log.info({requestId, tenant_id, method, route, status, duration_ms,
 * cu}, 'request')` on a logger made by createLogger, built directly: the fields are fixed, so
 * pino's walk over the object (type checks, key quoting, escaping by char code) is not needed, and
 * it was most of a line's cost. Strings are quoted by JSON.stringify, so any value stays valid JSON.
 */
export function formatRequestLine(r: RequestRecord): string {
  const tenant = r.tenantId === undefined ? '' : `,"tenant_id":${JSON.stringify(r.tenantId)}`;
  const route = r.route === null ? 'null' : JSON.stringify(r.route);
  return (
    `{"level":30${TIMESTAMP()},"service":"ttstore","requestId":${JSON.stringify(r.requestId)}${tenant}` +
    `,"method":${JSON.stringify(r.method)},"route":${route},"status":${num(r.status)}` +
    `,"duration_ms":${num(r.durationMs)},"cu":${num(r.cu)},"msg":"request"}\n`
  );
}

/** How long request lines wait to be joined into one write: a line reaches the output this much later. */
export const REQUEST_LOG_BATCH_MS = 10;

/**
 * The writer of the one line per request (src/http/app.ts): `log`'s level and output, with two changes.
 * No redaction: those lines hold fixed fields (ids, route template, status, timing, CU), never headers
 * or bodies, and redaction copies every logged object (at 1k requests/s a quarter of all the server's
 * allocation, sampling heap profile). And when `log` writes to a file descriptor (stdout), the lines
 * are written asynchronously, in batches: the lines of REQUEST_LOG_BATCH_MS are joined and handed
 * over as one buffer, so a burst, or a trickle of requests on a lightly loaded node, costs one write(2)
 * on libuv's pool, not one per line. Each write is a hand-off to a pool thread and a wake-up of the
 * event loop when it completes, which one request a turn would otherwise pay for alone. Batches
 * logged while a write is in flight go out together in the next one. At exit (a normal end,
 * SIGTERM's shutdown, an uncaught error), the batch not yet handed over and everything pending are
 * written synchronously, so no line is lost. While the
 * reader of the output does not keep up, at most 16 MiB of lines wait; later ones are dropped
 * rather than held. The pending batches are kept as buffers (sonic-boom's buffer mode): as one
 * growing string, each write made sonic-boom measure the UTF-8 length of everything pending.
 */
export function requestLog(log: Logger): RequestLog {
  if (!log.isLevelEnabled('info')) return { write() {} };
  const destination = (log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as { fd?: unknown; write(s: string): unknown };
  if (typeof destination.fd !== 'number') return { write: (r) => destination.write(formatRequestLine(r)) };

  let batch = '';
  let scheduled = false;
  const handOver = () => {
    scheduled = false;
    if (batch === '') return;
    const lines = batch;
    batch = '';
    boom.write(Buffer.from(lines, 'utf8') as never);
  };
  // Before the destination exists, so that this runs before pino's own exit flush of it; and that
  // flush is done here too, in case another destination registered pino's exit hook earlier.
  process.on('exit', () => {
    handOver();
    try {
      boom.flushSync();
    } catch {
      // the output is gone (EPIPE) or closed: nothing more can be written
    }
  });
  const boom = pino.destination({ dest: destination.fd, sync: false, maxLength: 16 << 20, contentMode: 'buffer' });
  return {
    write(r) {
      batch += formatRequestLine(r);
      if (!scheduled) {
        scheduled = true;
        setTimeout(handOver, REQUEST_LOG_BATCH_MS).unref();
      }
    },
  };
}
