/** Secrets never reach the logs: the logger redacts API keys, signatures, tokens and secrets. */
import { Writable } from 'node:stream';
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
