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
