// Structured logs (pino, one JSON object per line). Credentials never reach a log line.
import { pino, type Logger } from 'pino';

export type { Logger };

// Request lines never carry headers or bodies; these paths are the second line of defence for any
// object that might (an error with its request, a record with its key).
export const REDACT_PATHS = [
  'req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]',
  '*.headers.authorization', '*.headers["x-api-key"]',
  'api_key', '*.api_key', '*.*.api_key', 'apiKey', '*.apiKey', 'serviceKey', '*.serviceKey', 'service_key', '*.service_key',
  'authorization', 'x-api-key',
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

/** The fields of the one line per request (src/app.ts): ids, route template, status, timing, CU. */
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
  return `{"level":30${TIMESTAMP()},"service":"ttstore","requestId":${JSON.stringify(r.requestId)}${tenant}`
    + `,"method":${JSON.stringify(r.method)},"route":${route},"status":${num(r.status)}`
    + `,"duration_ms":${num(r.durationMs)},"cu":${num(r.cu)},"msg":"request"}\n`;
}

/**
 * The writer of the one line per request (src/app.ts): `log`'s level and output, with two changes.
 * No redaction: those lines hold fixed fields (ids, route template, status, timing, CU), never headers
 * or bodies, and redaction copies every logged object (at 1k requests/s a quarter of all the server's
 * allocation, sampling heap profile). And when `log` writes to a file descriptor (stdout), the lines
 * are written asynchronously: one write(2) per line on the event loop was the costliest step of a
 * metadata GET after the response itself; lines logged while a write is in flight go out together
 * in the next one, and whatever is pending is flushed when the process exits. While the reader of
 * the output does not keep up, at most 16 MiB of lines wait; later ones are dropped rather than held.
 * The pending lines are kept as buffers (sonic-boom's buffer mode): as one growing string, each line
 * made sonic-boom measure the UTF-8 length of everything pending, which in a burst of requests was
 * quadratic work and garbage.
 */
export function requestLog(log: Logger): RequestLog {
  if (!log.isLevelEnabled('info')) return { write() {} };
  const destination = (log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as { fd?: unknown; write(s: string): unknown };
  if (typeof destination.fd === 'number') {
    const boom = pino.destination({ dest: destination.fd, sync: false, maxLength: 16 << 20, contentMode: 'buffer' });
    return { write: (r) => boom.write(Buffer.from(formatRequestLine(r), 'utf8') as never) };
  }
  return { write: (r) => destination.write(formatRequestLine(r)) };
}
