// Structured logs (pino, one JSON object per line). Credentials never reach a log line.
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]',
  'api_key', '*.api_key', 'serviceKey', '*.serviceKey', 'authorization', 'x-api-key',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'ttstore' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination as never,
  );
}
