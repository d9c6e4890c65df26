import pino, { type Logger } from 'pino';
import { logContext, type LogFields } from './log-context';

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

/**
 * What `mixin` returns when no unit of work has set fields: shared, never allocated per line. It
 * is never mutated: `mergeFields` copies a context's fields rather than writing into them (pino's
 * default merge assigns the line's own fields into the mixin's object, which would have been the
 * AsyncLocalStorage's store, so one line's fields stuck to every later line of the same activity).
 */
const NO_FIELDS: LogFields = Object.freeze({}) as LogFields;

const mergeFields = (lineFields: object, contextFields: object): object =>
  contextFields === NO_FIELDS ? lineFields : Object.assign({}, contextFields, lineFields);

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      mixin: () => logContext.getStore() ?? NO_FIELDS,
      mixinMergeStrategy: mergeFields,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'talat' },
    },
    destination,
  );
}
