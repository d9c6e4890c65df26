/**
 * Secrets never reach the logs (the logger redacts API keys, signatures, tokens and secrets); a
 * unit of work's fields are on its lines, and a line's own fields on that line only.
 */
import { Writable } from 'node:stream';
import { withLogFields } from '../src/log-context';
import { createLogger } from '../src/logger';

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
