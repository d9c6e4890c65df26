/**
 * AfterAnswer (src/http/after-answer.ts): the work a gateway does after its answer is waited for
 * by idle(), also work begun while idle() waits; a failure is logged with what it was about and
 * does not break idle().
 */
import pino from 'pino';
import { AfterAnswer } from '../../src/http/after-answer';

const later = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));

it('idle() waits for every piece of work, also one begun while it waits; a failure is logged', async () => {
  const lines: { msg: string; receipt?: string }[] = [];
  const logger = pino({ level: 'warn' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  const after = new AfterAnswer(logger);
  const done: string[] = [];
  await after.idle(); // nothing running: at once

  after.run({ receipt: 'a' }, () => later(30, null).then(() => done.push('a')));
  after.run({ receipt: 'b' }, () => later(10, null).then(() => Promise.reject(new Error('pool closed'))));
  after.run({ receipt: 'c' }, async () => {
    await later(20, null);
    // begun while idle() waits for the first ones
    after.run({ receipt: 'd' }, () => later(40, null).then(() => done.push('d')));
    done.push('c');
  });
  await after.idle();
  expect(done.sort()).toEqual(['a', 'c', 'd']);
  expect(lines).toEqual([
    expect.objectContaining({ receipt: 'b', msg: 'work after the answer failed; it is done again later' }),
  ]);
});
