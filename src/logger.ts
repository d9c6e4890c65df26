/**
 * The process's logger (pino, JSON lines on stdout), its lines written in batches
 * (`createLogOutput`): one write per `bufferBytes` (4 KB) or `flushEveryMs` (1 s) of lines, at once
 * after an error or fatal line, and synchronously at exit. A SIGKILL or power loss can lose what
 * is buffered then; payment state never depends on the log. LOG_BUFFER=off: one write per line.
 * Writes go through sonic-boom with `sync: true`, so no write is left in flight where
 * process.exit could cut it off; a reader that stops draining stdout blocks the event loop, as
 * console.log does, instead of letting the buffer grow without bound.
 */
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

/** pino's number for `error`: lines at this level or above are written at once */
const URGENT_LEVEL = 50;

export interface LogOutputOptions {
  /** a file descriptor or a file path (appended to); default: stdout */
  dest?: number | string;
  /** false: one write per line (LOG_BUFFER=off) */
  buffered?: boolean;
  /** a batch is written once this many bytes are buffered */
  bufferBytes?: number;
  /** and at the latest this long after a line was buffered */
  flushEveryMs?: number;
}

/** Where a Talat process's lines go: a pino destination that writes in batches. */
export interface LogOutput extends pino.DestinationStream {
  /** writes what is buffered, synchronously (pino's `logger.flush(cb)` calls it) */
  flush(cb?: (err?: Error) => void): void;
  /** flushes and stops the timer (and closes a file it opened); later lines are dropped */
  close(): void;
}

type SonicBoom = ReturnType<typeof pino.destination>;

/** the outputs open in this process: each is flushed when the process exits */
const open = new Set<BufferedOutput>();
let exitHookInstalled = false;
const flushAllOnExit = () => {
  for (const out of open) out.flushAtExit();
};

class BufferedOutput implements LogOutput {
  /** pino sets lastLevel (and the other last*) on a destination that asks for it, before each write */
  readonly [pino.symbols.needsMetadataGsym] = true;
  lastLevel = 0;
  lastObj: unknown = undefined;
  lastMsg: unknown = undefined;
  lastTime: unknown = undefined;
  lastLogger: unknown = undefined;

  private readonly sonic: SonicBoom;
  private readonly buffered: boolean;
  /** a file this output opened (closed by `close`); never stdout's descriptor */
  private readonly ownsFile: boolean;
  private readonly bufferBytes: number;
  /**
   * The lines of the batch being collected, and their length in UTF-16 units (bytes for ASCII;
   * lines of Thai text are up to 3 times longer in bytes, so such a batch may reach 12 KB).
   */
  private lines: string[] = [];
  private length = 0;
  private pending = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor({ dest = 1, buffered = true, bufferBytes = 4096, flushEveryMs = 1000 }: LogOutputOptions) {
    this.buffered = buffered;
    this.bufferBytes = bufferBytes;
    this.ownsFile = typeof dest === 'string';
    // the batch is collected here, and sonic-boom writes each batch at once: it would otherwise
    // measure its whole buffer (Buffer.byteLength of a string of up to 4 KB) on every line
    this.sonic = pino.destination({ dest, sync: true, minLength: 0 });
    if (buffered) {
      this.timer = setInterval(() => {
        if (this.pending) this.flush();
      }, flushEveryMs);
      this.timer.unref();
      open.add(this);
      if (!exitHookInstalled) {
        exitHookInstalled = true;
        process.on('exit', flushAllOnExit);
      }
    }
  }

  write(line: string): void {
    if (this.closed) return;
    if (!this.buffered) {
      this.sonic.write(line);
      return;
    }
    this.lines.push(line);
    this.length += line.length;
    if (this.lastLevel >= URGENT_LEVEL || this.length >= this.bufferBytes) this.flush();
    else this.pending = true;
  }

  /** hands the collected batch to sonic-boom, which writes it (one write(2)) before returning */
  private writeBatch(): void {
    if (this.lines.length === 0) return;
    const batch = this.lines.length === 1 ? this.lines[0] : this.lines.join('');
    this.lines = [];
    this.length = 0;
    this.sonic.write(batch);
  }

  flush(cb?: (err?: Error) => void): void {
    this.pending = false;
    let err: Error | undefined;
    // sync mode: the batch is written, in one write(2), before this returns
    if (this.buffered && !this.closed) {
      try {
        this.writeBatch();
      } catch (e) {
        err = e as Error;
      }
    }
    cb?.(err);
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    open.delete(this);
    if (this.ownsFile) this.sonic.end();
  }

  /** the process is exiting: no event loop any more, write everything now; never throws */
  flushAtExit(): void {
    if (this.closed) return;
    try {
      this.writeBatch();
      this.sonic.flushSync();
    } catch {
      // nothing left to tell it to
    }
  }
}

/** Talat's log output (stdout unless told): buffered unless `buffered: false`. */
export function createLogOutput(opts: LogOutputOptions = {}): LogOutput {
  return new BufferedOutput(opts);
}

/**
 * What `mixin` returns when no unit of work has set fields: shared, never allocated per line. It
 * is never mutated: `mergeFields` copies a context's fields rather than writing into them (pino's
 * default merge assigns the line's own fields into the mixin's object, which would have been the
 * AsyncLocalStorage's store, so one line's fields stuck to every later line of the same activity).
 */
const NO_FIELDS: LogFields = Object.freeze({}) as LogFields;

const mergeFields = (lineFields: object, contextFields: object): object =>
  contextFields === NO_FIELDS ? lineFields : Object.assign({}, contextFields, lineFields);

/**
 * The root logger of a process. `destination`: where the lines go (tests pass their own stream);
 * default: `createLogOutput()`, stdout in batches.
 */
export function createLogger(level: string, destination: pino.DestinationStream = createLogOutput()): Logger {
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

/**
 * An uncaught exception or unhandled rejection leaves a fatal line (written at once, with what was
 * buffered before it) before Node ends the process as it would anyway (a monitor: it changes
 * nothing about what happens next). For the process entry points only.
 */
export function logCrashes(logger: Logger): void {
  process.on('uncaughtExceptionMonitor', (err, origin) =>
    logger.fatal({ err, origin }, origin === 'unhandledRejection' ? 'unhandled rejection' : 'uncaught exception'),
  );
}
