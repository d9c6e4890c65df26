/**
 * Values computed once per (key, version): concurrent callers share one computation, a newer
 * version replaces the old value, a failed computation is forgotten so the next call retries.
 * At most `maxKeys` keys are kept (the least recently used is dropped first).
 */
export class VersionedMemo<T> {
  private readonly entries = new Map<string, { version: string; value: Promise<T> }>();
  constructor(private readonly maxKeys = 64) {}

  get(key: string, version: string | number, build: () => Promise<T> | T): Promise<T> {
    const v = String(version);
    const hit = this.entries.get(key);
    if (hit && hit.version === v) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value;
    }
    const value = Promise.resolve().then(build);
    const entry = { version: v, value };
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.maxKeys) this.entries.delete(this.entries.keys().next().value as string);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
  }
}
