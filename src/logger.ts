import pino, { type Logger } from 'pino';
import { logContext } from './log-context';

export type { Logger };

/** Paths that may carry secrets: never logged. */
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-signature"]',
  'req.headers["webhook-signature"]',
  '*.apiKey',
  '*.api_key',
  '*.secret',
  '*.token',
  '*.signature',
  '*.password',
  '*.key_hash',
  'headers["x-api-key"]',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      mixin: () => logContext.getStore() ?? {},
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'talat' },
    },
    destination,
  );
}
