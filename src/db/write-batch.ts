/**
 * Writes made one at a time by many callers, sent together: each caller awaits its own item's
 * result, and the items that arrive within `windowMs` of the first go as one statement (DataLoader
 * with a timed schedule, no cache). For writes whose caller can wait a few milliseconds and whose
 * readers are operators or a later retry (a callback receipt's finish after its answer, a webhook
 * attempt's record): one round trip and one commit for the batch. A failed statement fails every
 * item of its batch, as it would have failed each alone.
 */
import DataLoader from 'dataloader';

/** Items per statement at most. */
const MAX_BATCH = 200;

/**
 * `write` gets a batch of items, at most one per `keyOf` (a later item of the same key goes in
 * the next statement, after this one), and returns one result per item, in order. `windowMs`:
 * how long the first item of a batch waits for others (0: those of the same tick).
 */
export function batchedWrites<T, R>(
  write: (items: T[]) => Promise<R[]>,
  opts: { windowMs: number; keyOf: (item: T) => string },
): (item: T) => Promise<R> {
  const inOrder = async (items: readonly T[]): Promise<R[]> => {
    const results = new Array<R>(items.length);
    let left = items.map((item, at) => ({ item, at }));
    while (left.length > 0) {
      const now: typeof left = [];
      const later: typeof left = [];
      const keys = new Set<string>();
      for (const x of left) {
        const key = opts.keyOf(x.item);
        if (keys.has(key)) later.push(x);
        else {
          keys.add(key);
          now.push(x);
        }
      }
      const written = await write(now.map((x) => x.item));
      if (written.length !== now.length) throw new Error(`a batch of ${now.length} wrote ${written.length} results`);
      now.forEach(({ at }, i) => (results[at] = written[i]));
      left = later;
    }
    return results;
  };
  const loader = new DataLoader<T, R>(inOrder, {
    cache: false,
    maxBatchSize: MAX_BATCH,
    ...(opts.windowMs > 0 ? { batchScheduleFn: (run: () => void) => setTimeout(run, opts.windowMs) } : {}),
  });
  return (item) => loader.load(item);
}
