/**
 * A process with Talat's logger on a file, for test/logger.test.ts: `node --import tsx
 * test/logger-process.ts FILE HOW` logs 5 info lines (buffered: under 4 KB) and ends HOW:
 * `exit` (process.exit), `drain` (the event loop runs out), `throw` (an uncaught exception),
 * `reject` (an unhandled rejection).
 */
import { createLogger, createLogOutput, logCrashes } from '../src/logger';

const [file, how] = process.argv.slice(2);
const logger = createLogger('info', createLogOutput({ dest: file }));
logCrashes(logger);
for (let i = 1; i <= 5; i++) logger.info({ i }, 'line');

if (how === 'exit') process.exit(3);
if (how === 'throw')
  setImmediate(() => {
    throw new Error('nobody caught this');
  });
if (how === 'reject') void Promise.reject(new Error('nobody waited for this'));
