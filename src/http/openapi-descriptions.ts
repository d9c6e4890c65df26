/**
 * The reference's prose that the route modules do not carry: each tag's description, and the
 * description of operations registered with a summary only (a route's own description wins).
 * test/http/openapi-reference.test.ts fails on an operation or tag without one.
 */

export const TAGS: { name: string; description: string }[] = [
  {
    name: 'payment',
    description:
      'Payments of your orders: start a PromptPay QR or card payment, read its status and timeline, list your payments, refund. Amounts are baht with satang decimals (120.50, not 12050); see docs/concepts.md. Every payment belongs to the API key that started it and to that key’s mode (live or sandbox); another key gets 404.',
  },
  {
    name: 'bank',
    description:
      'The bank partner’s users and orders, created through Talat (scopes bank:write, bank:read). `userId` is your shop’s id of the user.',
  },
  {
    name: 'callback',
    description:
      'Doors for the payment providers, not for your shop: each provider posts its result here, signed (X-Signature or a signature field) and from its IP ranges. A callback names the payment by its order id or payment id; errors use the callback envelope `{statusCode, body: {error, message}}`.',
  },
  {
    name: 'webhooks',
    description:
      'Where Talat tells your service that a payment changed (scope webhooks:manage): register endpoints, rotate their signing secrets, read the delivery attempts, replay dead letters and resend messages. An endpoint receives the events of its key’s mode.',
  },
  {
    name: 'storefront',
    description:
      'The shop’s public catalogue, prices, promotions, images and search, as the storefront app reads them. No API key.',
  },
  {
    name: 'orders',
    description:
      'Settling a grocery order on what was picked: authorise a card with capture=false, record adjustments while picking, then finalise once (capture and release, refund the difference, or a top-up payment); see docs/orders.md. An order belongs to the key that authorised it.',
  },
  {
    name: 'payment-links',
    description:
      'Payment links a shop sends in a chat: each opens a page that makes a PromptPay payment through the hosted checkout; single-use or reusable, with an optional expiry (scopes payments:write and payments:read). A link belongs to the key that created it.',
  },
  {
    name: 'reconciliation',
    description:
      'The operator’s daily comparison of the providers’ settlement files with Talat’s payments (scopes reconciliation:read for GETs, reconciliation:manage for POSTs); a key sees the runs of its mode.',
  },
  {
    name: 'system',
    description:
      'Health, readiness, metrics, this document, and the remote codec Temporal Web uses to show encrypted workflow payloads.',
  },
];

const RETRIES = 'the retry schedule of docs/integrating.md';

/** Descriptions by `METHOD /path`, for operations whose registration has a summary only. */
export const OPERATION_DESCRIPTIONS: Record<string, string> = {
  'POST /payment-links':
    'Creates a payment link of an amount in baht with a description, single-use or reusable, with an optional expiry (scope payments:write; Idempotency-Key honoured). The answer carries its short `url` (`/l/<code>`), which a shop pastes into a chat.',
  'GET /payment-links':
    "Lists the key's own payment links, newest first, each with the payments its visits made (scope payments:read); cursor pages as every list.",
  'GET /payment-links/{id}':
    "One of the key's payment links with its payments (scope payments:read); another key's link answers 404.",
  'POST /payment-links/{id}/deactivate':
    "Deactivates one of the key's links (scope payments:write): its page takes no more payments; the payments it made stay as they are.",
  'GET /l/{code}':
    'The page a customer opens from a link: the amount, the description and one button, in Thai or English (Accept-Language, or ?lang=th|en); no script, a strict CSP. A paid single-use link says so; an expired or deactivated one answers 410.',
  'POST /l/{code}':
    "The page's button: makes a PromptPay payment of the link (a single-use link's open payment is reused) and redirects (303) to its hosted checkout page. Rate-limited per address.",
  'POST /callback':
    'The card provider posts the charge result here (form or JSON, X-Signature over `<X-Timestamp>.<raw body>`). The charge is found by its `objectId` (the provider’s charge id); the payment workflow receives the result. When the payment has a `callback` URL, the answer is a 303 to it, else 200 with the recorded result.',
  'POST /cardnetcallback':
    'The card network posts its result here as the handler form `{orderId, paymentId, success, userId, amount}`, signed in the X-Signature header. The result is recorded, then passed to the payment named by `paymentId` (or `orderId`).',
  'POST /bankappcallback':
    'The bank app posts its result here as the handler form `{orderId, paymentId, success, userId, amount}`, signed in the X-Signature header. The result is recorded, then passed to the payment named by `paymentId` (or `orderId`).',
  'POST /qrcallback':
    'The QR (PromptPay) gateway posts the result of a QR payment here, signed by its `signature` field (canonical JSON). It names the payment by `paymentId`, the order reference or `orderId`; the payment workflow receives the result and the payment becomes paid or failed.',
  'POST /walletcallback':
    'The wallet gateway posts its result here in its gateway form, signed by its `signature` field (canonical JSON); the payment named by `orderId` receives it.',
  'POST /wallet/callback':
    'The wallet handler form `{orderId, paymentId, success, userId, amount, message?}`: the callback is recorded; with `success: true` the paid-order processing starts in the background. Public (no key, no signature), as the interface defines it.',
  'GET /healthz': 'Answers 200 while the process runs; it checks nothing else (use /readyz for the dependencies).',
  'GET /readyz':
    'Answers 200 when Postgres and Temporal both answer within 800 ms, else 503 SERVICE_UNAVAILABLE with `details.checks` naming the one that did not. Load balancers route by it.',
  'POST /webhooks/endpoints':
    'Registers an endpoint of the key (and of its mode) for payment events. The URL must be http(s) (https in production) to a host whose every address is public: it is resolved now and at each connection. The answer carries the signing secret (`whsec_...`) once; keep it to verify the `webhook-signature` header. For a receiver on your own machine, use `talat listen` (it needs WEBHOOK_ALLOW_LOOPBACK=on, development only).',
  'GET /webhooks/endpoints':
    'The key’s endpoints, oldest first, in cursor pages (`limit`, `cursor`); secrets are never shown again.',
  'GET /webhooks/endpoints/{id}':
    'One endpoint of the key (its URL, event types, description, disabled); another key’s endpoint is 404.',
  'PATCH /webhooks/endpoints/{id}':
    'Changes the fields sent and keeps the others. A new `url` is checked as at registration; `disabled: true` stops new messages to it.',
  'DELETE /webhooks/endpoints/{id}':
    'Removes the endpoint; deliveries still being retried for it stop. Its attempts stay in the timeline of each payment.',
  'POST /webhooks/endpoints/{id}/rotate-secret':
    'Makes a new signing secret and returns it once. For 24 h each message carries two signatures (old and new secret) so your receiver can switch without losing a delivery.',
  'GET /webhooks/endpoints/{id}/attempts':
    'Every delivery attempt to the endpoint, newest first, in cursor pages: filter by `status` (succeeded or failed) or `after` a time.',
  'POST /webhooks/endpoints/{id}/recover':
    'Resends, in a background workflow, every message to this endpoint that exhausted its retries since `since` (an ISO 8601 time). One recovery per endpoint at a time; a disabled endpoint is 409 CONFLICT (enable it first).',
  'POST /webhooks/messages/{msgId}/resend':
    'Sends one message (the `webhook-id` your receiver saw) to its endpoint again now, signed with the current secret: a single attempt, whose result is added to the attempts.',
  'GET /webhooks/dead-letters': `Deliveries that failed their first attempt and every retry (${RETRIES}), newest first, in cursor pages; each keeps the body that was sent. Replay one, or recover an endpoint, once your receiver is back.`,
  'POST /webhooks/dead-letters/{id}/replay':
    'Delivers the dead letter once more, signed anew with the endpoint’s current secret; a 2xx from your receiver marks it delivered.',
  'POST /codec/encode':
    'Temporal Web’s remote codec (scope `codec`, X-API-Key or `Authorization: Bearer`): encrypts payloads with the current key of TEMPORAL_CODEC_KEYS. Used by tools, not by shops.',
  'POST /codec/decode':
    'Temporal Web’s remote codec (scope `codec`): decrypts payloads encrypted with any key of TEMPORAL_CODEC_KEYS, so an operator can read workflow inputs and results in Temporal Web.',
  'GET /payments/{orderId}/timeline':
    'Everything that happened to one order of the key, oldest first: the payment’s creation, each provider callback, each status change, each webhook attempt and dead letter, each refund. Scope payments:read; another key’s order is 404.',
  'GET /late-payments':
    'Provider successes that arrived after the payment had already expired or failed, with what LATE_PAYMENT_POLICY did (refund or keep for review). Scope payments:read; the key sees its own.',
  'GET /checkout/{token}/qr.png':
    'The PNG QR code of the payment behind a checkout link (the token of `checkoutUrl`); 404 once the link has expired (an hour after the payment expires).',
  'GET /checkout/{token}/events':
    'Server-sent events for the hosted checkout page: an event `status` with `{"status": ...}` on each change; the stream ends on paid, failed or expired.',
  'GET /reconciliation/{provider}/{date}':
    'A reconciled settlement day of one provider (date YYYY-MM-DD, Bangkok): the summary, then its rows in cursor pages; exceptions only unless `outcome` asks for others. 404 until the day was reconciled.',
  'GET /reconciliation/{provider}/{date}/export.csv':
    'Every row of a reconciled day as CSV (one line a settlement row or payment, with its outcome), for the accountant.',
  'POST /reconciliation/{provider}/{date}/exceptions/{id}/resolve':
    'Closes one exception of the day with a resolution and a note; the row keeps who closed it and when.',
  'POST /reconciliation/{provider}/{date}/run':
    'Reconciles the day now (again) in a workflow and answers with its id; the result replaces the previous run’s rows when it ends.',
  'GET /reconciliation/{provider}/schedule':
    'The provider’s daily reconciliation schedule (a Temporal schedule): its time, whether it is paused, its recent and next runs.',
  'POST /reconciliation/{provider}/schedule/pause':
    'Pauses the provider’s daily schedule (with a note) until unpaused.',
  'POST /reconciliation/{provider}/schedule/unpause':
    'Resumes the provider’s daily schedule: the next run is the next scheduled day.',
  'POST /reconciliation/{provider}/schedule/trigger':
    'Runs the provider’s schedule once now: it reconciles yesterday (Bangkok), as the daily run does.',
};
