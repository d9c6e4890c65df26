/**
 * Periodic background work in a process (the refund re-drive's scan, the callbacks' redelivery):
 * `work` every `ms`, never two passes at once; a failed pass is logged and the next one tries
 * again. stop() clears the timer and waits for a pass under way. The timer does not hold the
 * process open.
 */
import type { Logger } from './logger';

export function every(
  logger: Pick<Logger, 'warn'>,
  what: string,
  ms: number,
  work: () => Promise<unknown>,
): { stop: () => Promise<void> } {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = Promise.resolve()
      .then(work)
      .catch((err: unknown) => logger.warn({ err }, `${what} failed: tried again at the next pass`))
      .finally(() => (running = undefined));
  }, ms);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
