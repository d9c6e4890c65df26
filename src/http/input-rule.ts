/**
 * The one input rule of every API: no string a request carries (path parameter, query parameter,
 * JSON or form field, or a JSON object key) may hold a character Postgres text cannot store:
 * U+0000 (text and jsonb refuse it) or a lone UTF-16 surrogate (jsonb refuses the `\ud800`
 * escape that JSON.stringify writes for it). Such a request is answered 400 INVALID_INPUT
 * naming the field, in the envelope of its area, before any handler runs, so nothing is written.
 *
 * Pure functions here; the middleware is in src/app/app.ts (it needs the router to name path
 * parameters).
 */

export interface Unstorable {
  /** `orderId`, `items.0.productId`, `query.query`, `path.groupId`... */
  field: string;
  reason: 'NUL character' | 'unpaired surrogate';
}

// eslint-disable-next-line no-control-regex
const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// eslint-disable-next-line no-control-regex
const ANY_BAD = /[\u0000\uD800-\uDFFF]/;

/** Why a string cannot be stored as Postgres text, or undefined when it can. */
export function unstorableReason(s: string): Unstorable['reason'] | undefined {
  if (!ANY_BAD.test(s)) return undefined; // the common case: one scan
  if (NUL.test(s)) return 'NUL character';
  if (LONE_SURROGATE.test(s)) return 'unpaired surrogate';
  return undefined;
}

/**
 * The first string (value or key) in a parsed JSON or form value that Postgres cannot hold.
 * Iterative (a 100 kB body of nested arrays is deeper than the call stack).
 */
export function findUnstorable(value: unknown, root = ''): Unstorable | undefined {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      const reason = unstorableReason(v);
      if (reason) return { field: path || '(body)', reason };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], path ? `${path}.${i}` : String(i)]);
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i];
        const at = path ? `${path}.${k}` : k;
        const reason = unstorableReason(k);
        if (reason) return { field: at, reason };
        stack.push([(v as Record<string, unknown>)[k], at]);
      }
    }
  }
  return undefined;
}

/** A printable rendering of a field name that may itself hold the bad character. */
export const printableField = (field: string): string =>
  JSON.stringify(field.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD')).slice(1, -1);
