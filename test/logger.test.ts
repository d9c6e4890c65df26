/**
 * Secrets never reach the logs (the logger redacts API keys, signatures, tokens and secrets); lines
 * are written in batches, in order, at once for errors and before the process ends.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { ConfigError, loadConfig } from '../src/config';
import { withLogFields } from '../src/log-context';
import { createLogger, createLogOutput } from '../src/logger';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { logger: createLogger('info', stream), lines };
}

describe('logger redaction', () => {
  it('redacts secrets in request headers and bodies', () => {
    const { logger, lines } = capture();
    logger.info({
      req: {
        headers: {
          'x-api-key': 'tk_live_SECRET1',
          authorization: 'Bearer SECRET2',
          'x-signature': 'SECRET3',
          host: 'x',
        },
      },
      body: { token: 'SECRET4', signature: 'SECRET5', secret: 'SECRET6', orderId: 'ORD-1' },
    });
    const out = lines.join('');
    for (const s of ['SECRET1', 'SECRET2', 'SECRET3', 'SECRET4', 'SECRET5', 'SECRET6']) expect(out).not.toContain(s);
    expect(out).toContain('[redacted]');
    expect(JSON.parse(out)).toMatchObject({ body: { orderId: 'ORD-1' }, req: { headers: { host: 'x' } } });
  });
});

/** Talat's log output (src/logger.ts): batched writes, and when a batch goes out. */
describe('log output', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-log-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const newFile = () => path.join(dir, `out-${++n}.log`);
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');
  const msgs = (f: string) =>
    read(f)
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { msg: string }).msg);

  it('holds lines until a batch is full, then writes them whole and in order; flush writes the rest', () => {
    const f = newFile();
    const out = createLogOutput({ dest: f });
    const logger = createLogger('info', out);
    const sent: string[] = [];
    for (let i = 0; i < 300; i++) {
      // a few lines larger than the batch and than sonic-boom's 16 KB write
      const pad = i % 97 === 0 ? 'x'.repeat(20_000) : 'y'.repeat(i % 40);
      logger.info({ pad }, `line ${i}`);
      sent.push(`line ${i}`);
      const written = msgs(f);
      expect(sent.slice(0, written.length)).toEqual(written); // a prefix: whole lines, in order
      expect(read(f).endsWith('\n') || read(f) === '').toBe(true);
    }
    expect(msgs(f).length).toBeLessThan(300); // some were still buffered
    logger.flush();
    expect(msgs(f)).toEqual(sent);
    out.close();
  });

  it('writes a line at level error or fatal at once, after every line buffered before it', () => {
    const f = newFile();
    const out = createLogOutput({ dest: f });
    const logger = createLogger('info', out).child({ role: 'gateway' }); // as the roles use it
    logger.info('before 1');
    logger.warn('before 2');
    expect(read(f)).toBe('');
    logger.error({ err: new Error('x') }, 'it failed');
    expect(msgs(f)).toEqual(['before 1', 'before 2', 'it failed']);
    logger.info('after');
    expect(msgs(f)).toHaveLength(3);
    logger.fatal('the end');
    expect(msgs(f)).toEqual(['before 1', 'before 2', 'it failed', 'after', 'the end']);
    out.close();
  });

  describe('the timer', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] }));
    afterEach(() => jest.useRealTimers());

    it('writes a lone line within a second', () => {
      const f = newFile();
      const out = createLogOutput({ dest: f });
      const logger = createLogger('info', out);
      logger.info('alone');
      jest.advanceTimersByTime(900);
      expect(read(f)).toBe('');
      jest.advanceTimersByTime(200);
      expect(msgs(f)).toEqual(['alone']);
      // an idle output writes nothing (not even empty writes) and keeps no process alive (unref'd)
      const size = fs.statSync(f).size;
      jest.advanceTimersByTime(5_000);
      expect(fs.statSync(f).size).toBe(size);
      out.close();
    });
  });

  it('buffered: false (LOG_BUFFER=off) writes each line at once', () => {
    const f = newFile();
    const out = createLogOutput({ dest: f, buffered: false });
    const logger = createLogger('info', out);
    logger.info('one');
    expect(msgs(f)).toEqual(['one']);
    logger.info('two');
    expect(msgs(f)).toEqual(['one', 'two']);
    out.close();
  });

  it('LOG_BUFFER: on unless told off; anything else stops the start naming it', () => {
    expect(loadConfig({}).logBuffered).toBe(true);
    expect(loadConfig({ LOG_BUFFER: 'on' }).logBuffered).toBe(true);
    expect(loadConfig({ LOG_BUFFER: 'off' }).logBuffered).toBe(false);
    expect(() => loadConfig({ LOG_BUFFER: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOG_BUFFER: 'true' })).toThrow(/LOG_BUFFER/);
  });

  /** a process (test/logger-process.ts) logs 5 buffered lines, then ends `how` */
  const runProcess = (how: string) => {
    const f = newFile();
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, 'logger-process.ts'), f, how], {
      cwd: path.join(__dirname, '..'),
      encoding: 'utf8',
      timeout: 30_000,
    });
    const lines = read(f)
      .split('\n')
      .filter(Boolean)
      .map(
        (l) => JSON.parse(l) as { level: number; msg: string; i?: number; origin?: string; err?: { message: string } },
      );
    return { status: r.status, stderr: r.stderr, lines };
  };
  const five = [1, 2, 3, 4, 5].map((i) => expect.objectContaining({ level: 30, msg: 'line', i }));

  it.each(['exit', 'drain'])('the buffered lines are written when the process ends (%s)', (how) => {
    const r = runProcess(how);
    expect(r.status).toBe(how === 'exit' ? 3 : 0);
    expect(r.lines).toEqual(five);
  });

  it.each([
    ['throw', 'uncaughtException', 'uncaught exception', 'nobody caught this'],
    ['reject', 'unhandledRejection', 'unhandled rejection', 'nobody waited for this'],
  ])('a crash (%s) leaves the buffered lines, then a fatal line last; Node still ends it', (how, origin, msg, err) => {
    const r = runProcess(how);
    expect(r.status).toBe(1); // Node's own ending, unchanged
    expect(r.stderr).toContain(err);
    expect(r.lines).toEqual([
      ...five,
      expect.objectContaining({ level: 60, msg, origin, err: expect.objectContaining({ message: err }) }),
    ]);
  });
});

/** The log context's fields (src/log-context.ts) on every line inside it, and only its own. */
describe('log context', () => {
  it("adds the context's fields; a line's own fields win and do not stick to later lines", () => {
    const { logger, lines } = capture();
    logger.info({ orderId: 'outside' }, 'before');
    withLogFields({ orderId: 'ORD-1', paymentId: 'pay_1' }, () => {
      logger.info({ amount: 5, paymentId: 'pay_own' }, 'first');
      logger.info('second');
    });
    logger.info('after');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed[0]).toMatchObject({ orderId: 'outside', msg: 'before' });
    expect(parsed[1]).toMatchObject({ orderId: 'ORD-1', paymentId: 'pay_own', amount: 5, msg: 'first' });
    expect(parsed[2]).toMatchObject({ orderId: 'ORD-1', paymentId: 'pay_1', msg: 'second' });
    expect(parsed[2]).not.toHaveProperty('amount');
    expect(parsed[3]).not.toHaveProperty('orderId');
  });
});
