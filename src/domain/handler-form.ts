/**
 * The handler form of the contract (wallet handler, and the shared processor of the card-network and
 * bank-app callbacks), to the letter:
 *  - the request body is a JSON string or an object; an object with a `body` key is an envelope
 *    whose `body` (again a JSON string or an object) is the event's body; without that key the
 *    event itself is the body; any other type is rejected;
 *  - orderId (alias order_id) non-empty, paymentId (alias payment_id) not null, success not null,
 *    userId (alias user_id) non-empty, each with its own error text; amount defaults to 0,
 *    message to '';
 *  - only boolean true counts as success.
 * Pure code: the routes decide what a failure means on their endpoint.
 */
import { thbToSatang } from './money';
import { jsonDeeperThan } from './json-depth';

export const HANDLER_ERRORS = {
  orderId: 'orderId is required in body',
  paymentId: 'paymentId is required in body',
  success: 'success is required in body',
  userId: 'userId is required in body',
} as const;

export interface HandlerEvent {
  orderId: string;
  paymentId: string;
  /** the value as sent; only `true` counts as success */
  success: unknown;
  succeeded: boolean;
  userId: string;
  amountSatang: number;
  /** THB, as sent (0 when absent) */
  amount: number;
  message: string;
}

export type Unwrapped =
  { ok: true; event: unknown; body: Record<string, unknown> } | { ok: false; error: string; event: unknown };
export type Validated = { ok: true; value: HandlerEvent } | { ok: false; error: string; missing: boolean };

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const typeName = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** JSON in a string field; nested deeper than MAX_JSON_DEPTH counts as not JSON (nothing recursive sees it). */
function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false } {
  if (jsonDeeperThan(text)) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Step 1 of the handler flow: the event as received and the body inside it. */
export function unwrapHandlerBody(requestBody: unknown): Unwrapped {
  let event = requestBody;
  if (typeof event === 'string') {
    const parsed = parseJsonText(event);
    if (!parsed.ok) return { ok: false, error: 'Request body is a string that is not valid JSON', event: requestBody };
    event = parsed.value;
  }
  if (!isPlainObject(event)) return { ok: false, error: `Unsupported request body type: ${typeName(event)}`, event };
  let body: unknown = Object.prototype.hasOwnProperty.call(event, 'body') ? event.body : event;
  if (typeof body === 'string') {
    const parsed = parseJsonText(body);
    if (!parsed.ok) return { ok: false, error: 'body is a string that is not valid JSON', event };
    body = parsed.value;
  }
  if (!isPlainObject(body)) return { ok: false, error: `Unsupported body type: ${typeName(body)}`, event };
  return { ok: true, event, body };
}

const absent = (v: unknown): boolean => v === undefined || v === null;
const pick = (body: Record<string, unknown>, name: string, alias: string): unknown =>
  absent(body[name]) ? body[alias] : body[name];

/** Best-effort ids of a body that may not validate, for the error log. */
export function idsOf(body: unknown): { orderId: string | null; paymentId: string | null } {
  if (!isPlainObject(body)) return { orderId: null, paymentId: null };
  const text = (v: unknown) =>
    typeof v === 'string' && v.length > 0 && v.length <= 256 ? v : typeof v === 'number' ? String(v) : null;
  return { orderId: text(pick(body, 'orderId', 'order_id')), paymentId: text(pick(body, 'paymentId', 'payment_id')) };
}

const MAX_ID = 256;

/** Step 2: the four required fields in the contract's order, then the optional ones. */
export function validateHandlerBody(body: Record<string, unknown>): Validated {
  const missing = (field: keyof typeof HANDLER_ERRORS): Validated => ({
    ok: false,
    error: HANDLER_ERRORS[field],
    missing: true,
  });
  const invalid = (error: string): Validated => ({ ok: false, error, missing: false });

  const orderId = pick(body, 'orderId', 'order_id');
  if (absent(orderId) || orderId === '') return missing('orderId');
  if (typeof orderId !== 'string' || orderId.length > MAX_ID)
    return invalid(`orderId must be a string of at most ${MAX_ID} characters`);

  const paymentId = pick(body, 'paymentId', 'payment_id');
  if (absent(paymentId)) return missing('paymentId');
  if (typeof paymentId !== 'string' || paymentId.length > MAX_ID)
    return invalid(`paymentId must be a string of at most ${MAX_ID} characters`);

  const success = body.success;
  if (absent(success)) return missing('success');

  const userId = pick(body, 'userId', 'user_id');
  if (absent(userId) || userId === '') return missing('userId');
  if (typeof userId !== 'string' || userId.length > MAX_ID)
    return invalid(`userId must be a string of at most ${MAX_ID} characters`);

  let amount = 0;
  let amountSatang = 0;
  if (!absent(body.amount)) {
    if (typeof body.amount !== 'number') return invalid('amount must be a number');
    amount = body.amount;
    if (amount !== 0) {
      const r = thbToSatang(amount);
      if (!r.ok) return invalid('amount must be a THB amount of at least 0 with at most 2 decimals, up to 1,000,000');
      amountSatang = r.satang;
    }
  }

  const message = absent(body.message) ? '' : body.message;
  if (typeof message !== 'string') return invalid('message must be a string');

  return {
    ok: true,
    value: { orderId, paymentId, success, succeeded: success === true, userId, amount, amountSatang, message },
  };
}

/**
 * Why a handler-form event does not name this order's payment (its payment id or provider
 * reference; its amount when one is given), or undefined when it does. The texts are the reasons
 * paid-order processing records.
 */
export function paymentMismatch(
  e: Pick<HandlerEvent, 'paymentId' | 'amountSatang'>,
  payment: { id: string; providerRef: string | null; amountSatang: number },
): string | undefined {
  if (e.paymentId !== payment.id && e.paymentId !== payment.providerRef)
    return `payment ${e.paymentId} is not the payment of this order`;
  if (e.amountSatang > 0 && e.amountSatang !== payment.amountSatang) return 'amount differs from the payment amount';
  return undefined;
}
