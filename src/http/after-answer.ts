/**
 * Work a gateway does after it answered a request (a callback's signal and its receipt's finish:
 * src/callbacks/processor.ts): kept until it ends, so a stopping gateway waits for it before its
 * pools close (idle()). A failure is logged with what it was about; the work must be one that is
 * done again when it fails (the callback's receipt stays unfinished and is delivered again).
 */
import type { Logger } from '../logger';

export class AfterAnswer {
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  /** Runs `work` now, without holding the answer; `what` names it in the log if it fails. */
  run(what: Record<string, unknown>, work: () => Promise<unknown>): void {
    const p: Promise<void> = work().then(
      () => undefined,
      (err: unknown) => this.logger.warn({ err, ...what }, 'work after the answer failed; it is done again later'),
    );
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /** Resolves when every piece of work begun so far (and any begun meanwhile) has ended. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
