/**
 * How deeply a JSON text nests, found by one iterative scan of the raw text (brackets inside
 * strings do not count), so a body can be refused before anything recursive (JSON.parse,
 * canonical JSON, jsonb) sees it. Pure: used by the HTTP body parser and the handler form's
 * JSON-in-a-string bodies alike.
 */

/** Deepest nesting of objects and arrays a request body may have. */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** True when `text` opens more than `max` objects/arrays inside one another (outside strings). */
export function jsonDeeperThan(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH)
        i++; // the escaped character, whatever it is
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}
