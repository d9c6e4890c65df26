/**
 * Canonical JSON of a callback payload (docs/callbacks.md "Signatures"): object keys sorted
 * recursively (by UTF-16 code units, as Array.prototype.sort does), no whitespace, strings and
 * numbers written as JSON.stringify writes them. This is the JSON Canonicalization Scheme of
 * RFC 8785 for the values JSON.parse produces, so providers can use any JCS library.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError('non-finite number has no JSON form');
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`${typeof value} has no JSON form`);
    return text;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** The payload that a `signature` field signs: the canonical JSON of the object without that field. */
export function signedPayloadText(payload: Record<string, unknown>): string {
  const { signature: _omit, ...rest } = payload;
  return canonicalJson(rest);
}
