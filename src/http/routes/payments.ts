/**
 * Payment API routes (SPEC.md "Payment API"): POST /cardpayment, POST /qrpayment,
 * GET /checkstatus/{orderId}. Thin: validate, start or read the payment's workflow, shape the
 * {statusCode, body} envelope. calculate-cost and the bank routes live beside this file.
 */
import Router from '@koa/router';
import { WorkflowNotFoundError } from '@temporalio/client';
import QRCode from 'qrcode';
import type { AppDeps } from '../app';
import { AppError, ErrorCode } from '../../domain/errors';
import { satangToThb } from '../../domain/money';
import type { PaymentMethod, PaymentStatus } from '../../domain/payment-state';
import { promptPayPayload } from '../../domain/promptpay';
import { chargeUpdate, paymentWorkflowId, WorkflowType, type CardPaymentInput, type PaymentView, type QrPaymentInput } from '../../domain/workflow-contract';
import { newId } from '../../ids';
import { startPaymentWorkflow, withinDeadline, type PaymentMemo } from '../../temporal/payments';
import { optionalApiKey, requireApiKey } from '../middleware/api-key';
import { envelope, registry, z } from '../openapi';
import { validate } from '../validate';
import { Amount, apiErrors, clockOf, guards, HttpUrl, Id, idempotencyHeader, rateLimitHeaders, requireProvider, security } from './payments-guards';

export { Amount };

/**
 * The payload as a QR code, PNG data URL: error correction M, 4-pixel modules, the standard
 * 4-module quiet zone (about 212 px square; scaling in the encoder costs more CPU than it saves bytes).
 */
export const qrImage = (payload: string): Promise<string> => QRCode.toDataURL(payload, { errorCorrectionLevel: 'M', margin: 4, scale: 4 });

/** How long POST /cardpayment waits for the charge to exist at the provider before answering without it. */
export const CARD_CHARGE_WAIT_MS = 10_000;

export const CardPaymentRequest = registry.register(
  'CardPaymentRequest',
  z
    .object({
      orderId: Id,
      userId: Id,
      amount: Amount,
      token: z.string().min(1).max(256).openapi({ description: "one-time card token from the card provider's client library" }),
      callback: HttpUrl.optional().openapi({ description: 'where the user is redirected after the card callback (http or https URL)' }),
    })
    .strict(),
);

export const QrPaymentRequest = registry.register(
  'QrPaymentRequest',
  z.object({ orderId: Id, userId: Id, amount: Amount, customerId: Id }).strict(),
);

const Status = z.enum(['pending', 'paid', 'failed', 'expired', 'refunded']);

const CardPaymentCreated = registry.register(
  'CardPaymentCreated',
  z.object({
    paymentId: z.string(),
    orderId: z.string(),
    method: z.literal('card'),
    status: Status,
    amount: z.number(),
    currency: z.literal('THB'),
    chargeId: z.string().nullable().openapi({ description: "the provider's charge id (objectId in its callback); null if not created yet" }),
    authorizeUri: z.string().nullable().openapi({ description: 'where to send the user for 3-D Secure, when the provider asks for it' }),
    failureReason: z.string().optional(),
  }),
);

const QrPaymentCreated = registry.register(
  'QrPaymentCreated',
  z.object({
    paymentId: z.string(),
    orderId: z.string(),
    method: z.literal('qr'),
    status: Status,
    amount: z.number(),
    currency: z.literal('THB'),
    customerId: z.string(),
    expiresAt: z.string().openapi({ description: 'ISO 8601 UTC; the payment ends `expired` when no result arrived by then' }),
    qr: z.object({
      payload: z.string().openapi({ description: 'PromptPay (EMVCo) payload, tags 00 01 29 58 53 54 63', example: '00020101021229370016A000000677010111011300668012345675802TH530376454044.226304E469' }),
      crc: z.string().openapi({ description: 'CRC16 (CCITT-FALSE) of the payload: its last 4 characters' }),
      image: z.string().openapi({ description: 'the payload as a QR code: PNG data URL' }),
    }),
  }),
);

const PaymentStatusOut = registry.register(
  'PaymentStatus',
  z.object({
    paymentId: z.string(),
    orderId: z.string(),
    method: z.string(),
    status: Status,
    amount: z.number(),
    currency: z.literal('THB'),
    mode: z.enum(['live', 'sandbox']),
    createdAt: z.string(),
    updatedAt: z.string(),
    expiresAt: z.string().nullable(),
    providerRef: z.string().nullable(),
    history: z.array(z.object({ status: Status, at: z.string(), reason: z.string() })),
  }),
);

registry.registerPath({
  method: 'post',
  path: '/cardpayment',
  summary: 'Start a card payment (public, form-encoded)',
  description:
    'Starts the payment workflow payment-<orderId>; an activity creates the charge at the card provider (sandbox simulator unless live). Waits up to 10 s for the charge, then answers. The same order and amount again returns the existing payment; another amount is 409. An X-API-Key is optional: with one, the payment belongs to that key (its mode, its webhooks).',
  tags: ['payment'],
  request: { headers: idempotencyHeader, body: { content: { 'application/x-www-form-urlencoded': { schema: CardPaymentRequest } } } },
  responses: {
    200: { description: 'payment started (or the existing payment of this order)', headers: rateLimitHeaders, content: { 'application/json': { schema: envelope(CardPaymentCreated) } } },
    ...apiErrors([400, 401, 403, 409, 413, 422, 429, 503]),
  },
});

registry.registerPath({
  method: 'post',
  path: '/qrpayment',
  summary: 'Create a PromptPay QR payment',
  description:
    "Builds the PromptPay payload for the merchant's PromptPay id (PROMPTPAY_ID) and the amount, and starts the QR payment workflow, which waits for the QR callback or ends expired after QR_EXPIRY_S. The same order and amount again returns the existing payment (same QR); another amount is 409 CONFLICT. Scope payments:write.",
  tags: ['payment'],
  security,
  request: { headers: idempotencyHeader, body: { content: { 'application/json': { schema: QrPaymentRequest } } } },
  responses: {
    200: { description: 'the QR payment', headers: rateLimitHeaders, content: { 'application/json': { schema: envelope(QrPaymentCreated) } } },
    ...apiErrors([400, 401, 403, 409, 413, 422, 429, 503]),
  },
});

registry.registerPath({
  method: 'get',
  path: '/checkstatus/{orderId}',
  summary: "A payment's status and history",
  description:
    "Reads the record the payment's workflow keeps (the payments row and its events). A key sees the payments of its own mode that it created, and public card payments. Scope payments:read.",
  tags: ['payment'],
  security,
  request: { params: z.object({ orderId: Id }) },
  responses: {
    200: { description: 'status and history', headers: rateLimitHeaders, content: { 'application/json': { schema: envelope(PaymentStatusOut) } } },
    ...apiErrors([400, 401, 403, 404, 429, 503]),
  },
});

interface PaymentRow {
  id: string;
  order_id: string;
  method: PaymentMethod;
  amount_satang: string;
  status: PaymentStatus;
  mode: 'live' | 'sandbox';
  api_key_id: string | null;
  provider_ref: string | null;
  details: { charge?: { status?: string; authorizeUri?: string | null } };
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function paymentRoutes(deps: AppDeps): Router {
  const r = new Router();
  const { limited, idempotent } = guards(deps);
  const { client, taskQueue } = deps.temporal;
  const clock = clockOf(deps);

  /** The card view once the charge exists (update `charge`), or from the record when the workflow has ended. */
  async function cardView(orderId: string): Promise<Pick<PaymentView, 'status' | 'charge' | 'failureReason'> | undefined> {
    const handle = client.workflow.getHandle(paymentWorkflowId(orderId));
    try {
      return await withinDeadline(client, CARD_CHARGE_WAIT_MS, () => handle.executeUpdate(chargeUpdate), () => undefined);
    } catch (e) {
      if (e instanceof AppError) throw e;
      // the workflow has ended: its record is final
      const row = await deps.db('payments').where({ order_id: orderId }).first<PaymentRow | undefined>();
      if (!row) return undefined;
      const events = await deps.db('payment_events').where({ payment_id: row.id }).orderBy('id', 'desc').first<{ reason: string } | undefined>('reason');
      return {
        status: row.status,
        charge: row.provider_ref ? { id: row.provider_ref, status: row.details.charge?.status ?? 'pending', authorizeUri: row.details.charge?.authorizeUri ?? null } : undefined,
        failureReason: row.status === 'failed' || row.status === 'expired' ? events?.reason : undefined,
      };
    }
  }

  r.post('/cardpayment', limited, optionalApiKey('payments:write'), idempotent, async (ctx) => {
    const req = validate(CardPaymentRequest, ctx.request.body);
    const key = ctx.state.apiKey;
    const mode = key?.mode ?? (deps.config.simulators ? 'sandbox' : 'live');
    requireProvider(deps, 'card-provider', mode);
    const paymentId = newId('pay');
    const input: CardPaymentInput = {
      paymentId,
      orderId: req.orderId,
      userId: req.userId,
      amountSatang: req.amount,
      mode,
      apiKeyId: key?.id,
      callbackUrl: req.callback,
      token: req.token,
      returnUri: `${deps.config.publicBaseUrl.replace(/\/+$/, '')}/callback`,
      timeoutSeconds: deps.config.payments.cardTimeoutSeconds,
    };
    const started = await startPaymentWorkflow(client, {
      taskQueue,
      start: { type: WorkflowType.card, input },
      memo: { paymentId, orderId: req.orderId, method: 'card', amountSatang: req.amount, mode, apiKeyId: key?.id ?? null },
    });
    const view = await cardView(req.orderId);
    ctx.body = {
      statusCode: 200,
      body: {
        paymentId: started.paymentId,
        orderId: req.orderId,
        method: 'card',
        status: view?.status ?? started.status,
        amount: satangToThb(req.amount),
        currency: 'THB',
        chargeId: view?.charge?.id ?? null,
        authorizeUri: view?.charge?.authorizeUri ?? null,
        ...(view?.failureReason ? { failureReason: view.failureReason } : {}),
      },
    };
  });

  r.post('/qrpayment', limited, requireApiKey('payments:write'), idempotent, async (ctx) => {
    const req = validate(QrPaymentRequest, ctx.request.body);
    const key = ctx.state.apiKey!;
    const paymentId = newId('pay');
    const qr = promptPayPayload({ id: deps.config.payments.promptPayId, amountSatang: req.amount });
    const expiresAt = new Date(clock() + deps.config.payments.qrExpirySeconds * 1000).toISOString();
    const memo: PaymentMemo = {
      paymentId,
      orderId: req.orderId,
      method: 'qr',
      amountSatang: req.amount,
      mode: key.mode,
      apiKeyId: key.id,
      qrPayload: qr.payload,
      qrCrc: qr.crc,
      expiresAt,
    };
    const input: QrPaymentInput = {
      paymentId,
      orderId: req.orderId,
      userId: req.userId,
      customerId: req.customerId,
      amountSatang: req.amount,
      mode: key.mode,
      apiKeyId: key.id,
      expiresAt,
      qr: { payload: qr.payload, crc: qr.crc, promptPayId: deps.config.payments.promptPayId },
    };
    const started = await startPaymentWorkflow(client, { taskQueue, start: { type: WorkflowType.qr, input }, memo });
    const payload = started.memo.qrPayload ?? qr.payload;
    ctx.body = {
      statusCode: 200,
      body: {
        paymentId: started.paymentId,
        orderId: req.orderId,
        method: 'qr',
        status: started.status,
        amount: satangToThb(req.amount),
        currency: 'THB',
        customerId: req.customerId,
        expiresAt: started.memo.expiresAt ?? expiresAt,
        qr: {
          payload,
          crc: started.memo.qrCrc ?? payload.slice(-4),
          image: await qrImage(payload),
        },
      },
    };
  });

  r.get('/checkstatus/:orderId', limited, requireApiKey('payments:read'), async (ctx) => {
    const { orderId } = validate(z.object({ orderId: Id }), { orderId: ctx.params.orderId });
    const key = ctx.state.apiKey!;
    const notFound = () => new AppError(ErrorCode.NOT_FOUND, `No payment for order ${orderId}`, { orderId });
    const row = await deps.db('payments').where({ order_id: orderId }).first<PaymentRow | undefined>();
    if (row) {
      if (row.mode !== key.mode || (row.api_key_id !== null && row.api_key_id !== key.id)) throw notFound();
      const events = await deps.db('payment_events').where({ payment_id: row.id }).orderBy('id').select<{ to_status: PaymentStatus; reason: string; created_at: Date }[]>('to_status', 'reason', 'created_at');
      ctx.body = {
        statusCode: 200,
        body: {
          paymentId: row.id,
          orderId: row.order_id,
          method: row.method,
          status: row.status,
          amount: satangToThb(Number(row.amount_satang)),
          currency: 'THB',
          mode: row.mode,
          createdAt: row.created_at.toISOString(),
          updatedAt: row.updated_at.toISOString(),
          expiresAt: row.expires_at ? row.expires_at.toISOString() : null,
          providerRef: row.provider_ref,
          history: events.map((e) => ({ status: e.to_status, at: e.created_at.toISOString(), reason: e.reason })),
        },
      };
      return;
    }
    // Started a moment ago, its first activity not run yet: the workflow is still pending.
    const desc = await withinDeadline(client, 5_000, async () => {
      try {
        return await client.workflow.getHandle(paymentWorkflowId(orderId)).describe();
      } catch (e) {
        if (e instanceof WorkflowNotFoundError) return undefined;
        throw e;
      }
    });
    const memo = desc?.memo as Partial<PaymentMemo> | undefined;
    if (!desc || !memo?.paymentId || desc.status.name !== 'RUNNING') throw notFound();
    if (memo.mode !== key.mode || ((memo.apiKeyId ?? null) !== null && memo.apiKeyId !== key.id)) throw notFound();
    const at = desc.startTime.toISOString();
    ctx.body = {
      statusCode: 200,
      body: {
        paymentId: memo.paymentId,
        orderId,
        method: memo.method,
        status: 'pending',
        amount: satangToThb(memo.amountSatang ?? 0),
        currency: 'THB',
        mode: memo.mode,
        createdAt: at,
        updatedAt: at,
        expiresAt: memo.expiresAt ?? null,
        providerRef: null,
        history: [{ status: 'pending', at, reason: 'created' }],
      },
    };
  });

  return r;
}
