/**
 * Canonical JSON: JSON.stringify's text with object keys sorted at every level (UTF-16 order),
 * undefined members left out, toJSON honoured; a cycle throws. What the callback signatures
 * and the idempotency keys hash (safe-stable-stringify, deterministic). The proofs keep their own
 * text (src/proofs.ts, proofJson).
 */
import { configure } from 'safe-stable-stringify';

const stringify = configure({ deterministic: true, circularValue: TypeError, bigint: false });

/** The canonical JSON of `value` (undefined: `null`). */
export const canonicalJson = (value: unknown): string => stringify(value ?? null) ?? 'null';
