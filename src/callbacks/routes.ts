/**
 * Callback API (the contract "Callback API"): where payment providers post results.
 * Routes are thin: verify (src/callbacks/verify), validate, find the payment, hand the verified
 * callback to the processor (record + signal, idempotent, the record durable before the answer).
 * /wallet/callback is the public wallet handler with its own response shapes.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { AppDeps } from '../http/deps';
import { rawBodyOf } from '../http/middleware/body';
import type { Notifier } from '../notifier';
import type { PaymentRecords, PaymentRef } from '../payments';
import { processCallback, releaseClaim, type ProcessorDeps, type VerifiedCallback } from './processor';
import { redeliverUnfinished } from './redelivery';
import { batchedWrites } from '../db/write-batch';
import {
  callbackPayment,
  paymentMatches,
  type CallbackProvider,
  type CallbackStatus,
  type Claim,
  type Outcome,
  type Receipt,
  type StoredResponse,
  AmbiguousOrderError,
  finishReceipts,
  type Finish,
} from './receipts';
import { CardCallback, CardTestCallback, SCHEMAS } from './schemas';
import { handlerRecordFrom } from './records';
import { requireBodyType, verifySignatureHeaders, verifySignedPayload } from './verify';
import { handleWalletCallback } from './wallet-handler';
import { providerNameOf } from '../domain/providers';
import { CALLBACK_PATH_OF, endpointsWithSchema, WALLET_HANDLER_PATH } from './index';
import { AppError, ErrorCode } from '../domain/errors';
import { unwrapHandlerBody, validateHandlerBody } from '../domain/handler-form';
import { assertStorable } from '../http/middleware/input';
import { thbToSatang } from '../domain/money';
import type { PaymentStatus } from '../payments';
import type { z } from '../http/openapi';
import { validate } from '../http/validate';
import type { AlertThrottle } from '../alerts';
import { createRateLimiter, rateLimit } from '../http/middleware/rate-limit';
import { clientAddress, compileCidrs, formatAddress, inCidrs } from '../http/ip';

/** `tok_test_4242` -> `…4242`: enough for an operator to match a receipt, useless to anyone else. */
export const maskToken = (token: string): string => `…${token.slice(-4)}`;

function orderNotFound(orderId: string, paymentId?: string): never {
  throw new AppError(
    ErrorCode.ORDER_NOT_FOUND,
    paymentId ? `No payment ${paymentId} for order ${orderId}` : `Order ${orderId} not found`,
  );
}

function assertAmount(wire: unknown, payment: PaymentRef): void {
  const r = thbToSatang(wire);
  if (!r.ok || r.satang !== payment.amountSatang)
    throw new AppError(ErrorCode.INVALID_INPUT, 'amount does not match the payment amount');
}

/** What a conflict's answer says happens next (the provider must not retry: the result is recorded). */
function conflictMessage(status: CallbackStatus, paymentStatus: PaymentStatus, policy: 'refund' | 'review'): string {
  const next =
    status === 'success'
      ? policy === 'refund'
        ? 'the payment will be refunded automatically'
        : 'the payment is listed for review'
      : 'the payment keeps its status';
  return `Callback recorded as a conflict: the payment had already ended ${paymentStatus}; ${next} and the administrator is told. Do not retry.`;
}

function generalResponse(
  orderId: string,
  status: CallbackStatus,
  outcome: Outcome,
  paymentStatus: PaymentStatus,
  policy: 'refund' | 'review',
): StoredResponse {
  const message =
    outcome === 'signalled' || outcome === 'redriven'
      ? 'Callback processed'
      : outcome === 'conflict'
        ? conflictMessage(status, paymentStatus, policy)
        : outcome === 'payment_closed'
          ? 'Callback recorded; the payment had already ended'
          : 'Callback recorded; success is not boolean true or false, nothing was processed';
  return { status: 200, body: { statusCode: 200, body: { message, orderId, status } } };
}

function send(ctx: Context, r: StoredResponse): void {
  ctx.status = r.status;
  if (r.location) ctx.set('Location', r.location);
  ctx.body = r.body;
}

/**
 * /wallet/callback is public: limited per client address (WALLET_RATE_PER_SECOND / _PER_MINUTE,
 * generous), with the project's one rate limiter. Its buckets are addresses, not API keys, so
 * they are counted in this gateway's memory (a flood costs no database write; with N gateways an
 * address may get up to N times the limit); addresses in WALLET_RATE_ALLOW (the wallet gateway)
 * are never limited.
 */
function walletRateLimit(
  deps: Pick<AppDeps, 'alerts' | 'clock' | 'config' | 'db' | 'logger' | 'notifier' | 'temporal'>,
) {
  const { walletRateLimit: limits, callbacks } = deps.config;
  const limiter = createRateLimiter({
    db: deps.db,
    clock: deps.clock,
    perSecond: limits.perSecond,
    perMinute: limits.perMinute,
  });
  const allow = compileCidrs(limits.allow);
  const proxies = compileCidrs(callbacks.trustedProxies);
  return rateLimit(limiter, {
    bucketOf: (ctx) => {
      const address = clientAddress(ctx.req.socket.remoteAddress, ctx.get('X-Forwarded-For') || undefined, proxies);
      return address && inCidrs(address, allow) ? undefined : `wallet:${formatAddress(address)}`;
    },
  });
}

export function callbackRoutes(
  deps: Pick<AppDeps, 'alerts' | 'clock' | 'config' | 'db' | 'logger' | 'notifier' | 'temporal'> & {
    notifier: Notifier;
    alerts?: AlertThrottle;
    payments: Pick<PaymentRecords, 'byOrderId' | 'byOrderNamed'>;
    /** how a result reaches the payment's workflow (the payments slice's resultDelivery) */
    deliverResult: ProcessorDeps['deliverResult'];
    /** the callbacks' signals and finishes that run after the answer (the app waits for them when it stops) */
    afterAnswer: ProcessorDeps['afterAnswer'];
    /** runs periodic work until the app stops (the redelivery of receipts left unfinished) */
    every: (what: string, ms: number, work: () => Promise<unknown>) => void;
  },
): Router {
  const r = new Router();
  const { config, db, logger, notifier, alerts } = deps;
  const processorDeps = {
    db,
    client: deps.temporal.client,
    logger,
    taskQueue: deps.temporal.taskQueue,
    signingKey: config.results.signingKey,
    duplicateWaitMs: config.callbacks.duplicateWaitMs,
    deliveryLeaseMs: config.callbacks.deliveryLeaseMs,
    alerts,
    deliverResult: deps.deliverResult,
    afterAnswer: deps.afterAnswer,
    finishes: batchedWrites((finishes: Finish[]) => finishReceipts(db, finishes), {
      windowMs: config.database.writeBatchMs,
      keyOf: (f) => f.id,
    }),
  };
  /**
   * The route's own checks of the payment its lookup found (the claim made the same ones in SQL):
   * a receipt the lookup claimed is released if they refuse the callback after all.
   */
  const checked = async (found: { receipt: Receipt | null | undefined }, check: () => void): Promise<void> => {
    try {
      check();
    } catch (e) {
      if (found.receipt?.claimed) await releaseClaim(processorDeps, found.receipt);
      throw e;
    }
  };
  /** The claim of a callback whose amount (THB on the wire) must be the payment's; none when it is no amount at all. */
  const withAmount = (claim: Claim, wire: unknown): Claim | undefined => {
    const r = thbToSatang(wire);
    return r.ok ? { ...claim, amountSatang: r.satang } : undefined;
  };
  /**
   * callbackPayment, with an order id several accounts or modes use and nothing in the callback
   * to tell them apart refused (409) and alerted: never delivered to a guess.
   */
  const lookup = async (...a: Parameters<typeof callbackPayment> extends [unknown, ...infer R] ? R : never) => {
    try {
      return await callbackPayment(processorDeps, ...a);
    } catch (e) {
      if (!(e instanceof AmbiguousOrderError)) throw e;
      logger.warn({ orderId: e.orderId, candidates: e.candidates, provider: a[1] }, 'callback: ambiguous order id');
      void alerts
        ?.alert(`callback-ambiguous:${a[1]}:${e.orderId}`, {
          subject: `Talat: a ${a[1]} callback for order ${e.orderId} was refused: ${e.candidates} payments use it`,
          text: `${e.message}. The callback named no payment id or reference that tells them apart; ask the provider to send the payment id (docs/concepts.md).`,
        })
        .catch(() => undefined);
      throw new AppError(
        ErrorCode.CONFLICT,
        `Order id ${e.orderId} is used by ${e.candidates} payments (other accounts or modes): send the paymentId Talat gave for it`,
        { orderId: e.orderId },
      );
    }
  };
  /**
   * A callback's answer, by provider: the general one, or for the card callback of a payment with
   * a `callback` URL the 303 that sends the user on (the same for the redelivery's finish).
   */
  const respondOf =
    ({ provider, payment: p, status }: Pick<VerifiedCallback, 'provider' | 'payment' | 'status'>) =>
    (outcome: Outcome, paymentStatus: PaymentStatus): StoredResponse => {
      const general = generalResponse(p.orderId, status, outcome, paymentStatus, config.results.latePaymentPolicy);
      if (provider !== 'card' || !p.callbackUrl) return general;
      const to = new URL(p.callbackUrl);
      to.searchParams.set('orderId', p.orderId);
      to.searchParams.set('status', status);
      return { ...general, status: 303, location: to.toString() };
    };
  deps.every('callback redelivery', config.callbacks.redeliveryMs, () => redeliverUnfinished(processorDeps, respondOf));

  r.post(CALLBACK_PATH_OF.card, async (ctx) => {
    requireBodyType(ctx, 'form');
    verifySignatureHeaders(ctx, config, 'CARD', rawBodyOf(ctx) ?? '');
    const form = ctx.request.body as Record<string, unknown>;

    const claim: Claim = {
      sourceIp: ctx.state.clientIp ?? 'unknown',
      // the card token is a credential: the receipt keeps only its last four characters
      request: typeof form.token === 'string' ? { ...form, token: maskToken(form.token) } : form,
    };
    let found: { payment: PaymentRef; receipt: Receipt | null | undefined } | undefined;
    let status: 'success' | 'failed';
    let reference: string;
    let message: string | undefined;
    if (form.objectId !== undefined || config.production) {
      const c = validate(CardCallback, form);
      status = c.status === 'true' ? 'success' : 'failed';
      reference = c.objectId;
      message = c.message || undefined;
      found = await lookup({ providerRef: c.objectId }, 'card', status, { ...claim, reference, message });
      if (!found) throw new AppError(ErrorCode.ORDER_NOT_FOUND, `No payment for charge ${c.objectId}`);
    } else {
      // the development test form (never in production)
      const t = validate(CardTestCallback, form);
      status = t.status === 'success' || t.status === 'true' ? 'success' : 'failed';
      reference = t.transactionId;
      found = await lookup({ orderId: t.orderId }, 'card', status, withAmount({ ...claim, reference }, t.amount));
      if (!found) orderNotFound(t.orderId);
      const payment = found.payment;
      await checked(found, () => assertAmount(t.amount, payment));
    }
    const p = found.payment;
    const { response } = await processCallback(processorDeps, {
      provider: 'card',
      payment: p,
      receipt: found.receipt,
      status,
      ...claim,
      reference,
      message,
      respond: respondOf({ provider: 'card', payment: p, status }),
    });
    send(ctx, response);
  });

  for (const { path, provider } of endpointsWithSchema('handler')) {
    r.post(path, async (ctx) => {
      requireBodyType(ctx, 'json');
      verifySignatureHeaders(ctx, config, providerNameOf(provider), rawBodyOf(ctx) ?? '');
      const unwrapped = unwrapHandlerBody(ctx.request.body);
      assertStorable(unwrapped.event); // a JSON string's content: the input rule, once parsed
      if (!unwrapped.ok) throw new AppError(ErrorCode.INVALID_INPUT, unwrapped.error);
      assertStorable(unwrapped.body);
      const valid = validateHandlerBody(unwrapped.body);
      if (!valid.ok) throw new AppError(valid.missing ? ErrorCode.MISSING_FIELD : ErrorCode.INVALID_INPUT, valid.error);
      const e = valid.value;
      const status: CallbackStatus = e.success === true ? 'success' : e.success === false ? 'failed' : 'unprocessed';
      const claim: Claim = { sourceIp: ctx.state.clientIp ?? 'unknown', request: unwrapped.event };
      const found = await lookup({ orderId: e.orderId }, provider, status, {
        ...claim,
        reference: e.paymentId,
        message: e.message || undefined,
        paymentRef: e.paymentId,
        ...(e.amountSatang > 0 ? { amountSatang: e.amountSatang } : {}),
      });
      if (!found) orderNotFound(e.orderId, e.paymentId);
      const { payment, receipt } = found;
      await checked(found, () => {
        if (!paymentMatches(payment, e.paymentId)) orderNotFound(e.orderId, e.paymentId);
        if (e.amountSatang > 0 && e.amountSatang !== payment.amountSatang)
          throw new AppError(ErrorCode.INVALID_INPUT, 'amount does not match the payment amount');
      });
      const { response } = await processCallback(processorDeps, {
        provider,
        payment,
        receipt,
        status,
        ...claim,
        reference: e.paymentId,
        message: e.message || undefined,
        record: (source) => handlerRecordFrom(source, `${provider}_callbacks`, e, unwrapped.event, unwrapped.body),
        respond: respondOf({ provider, payment, status }),
      });
      send(ctx, response);
    });
  }

  // QR and wallet gateway form: JSON with a `signature` field; QR names our payment, the wallet its own transaction
  type FieldSigned = {
    orderId: string;
    status: 'success' | 'failed';
    amount: number;
    paymentId?: string;
    walletId?: string;
  };
  const fieldSigned: {
    path: string;
    provider: CallbackProvider;
    schema: z.ZodType<FieldSigned, z.ZodTypeDef, unknown>;
  }[] = endpointsWithSchema('qr', 'walletGateway').map((e) => ({
    path: e.path,
    provider: e.provider,
    schema: SCHEMAS[e.schema],
  }));
  for (const { path, provider, schema } of fieldSigned) {
    r.post(path, async (ctx) => {
      requireBodyType(ctx, 'json');
      const c = validate(schema, verifySignedPayload(ctx.request.body, config, providerNameOf(provider)));
      const claim: Claim = {
        sourceIp: ctx.state.clientIp ?? 'unknown',
        request: ctx.request.body,
        reference: c.paymentId ?? c.walletId,
      };
      const claimChecked = withAmount(
        c.paymentId !== undefined ? { ...claim, paymentRef: c.paymentId } : claim,
        c.amount,
      );
      const found = await lookup({ orderId: c.orderId }, provider, c.status, claimChecked);
      if (!found) orderNotFound(c.orderId, c.paymentId);
      const { payment, receipt } = found;
      await checked(found, () => {
        if (c.paymentId !== undefined && !paymentMatches(payment, c.paymentId)) orderNotFound(c.orderId, c.paymentId);
        assertAmount(c.amount, payment);
      });
      const { response } = await processCallback(processorDeps, {
        provider,
        payment,
        receipt,
        status: c.status,
        ...claim,
        reference: c.paymentId ?? c.walletId,
        respond: respondOf({ provider, payment, status: c.status }),
      });
      send(ctx, response);
    });
  }

  r.post(WALLET_HANDLER_PATH, walletRateLimit(deps), async (ctx) => {
    requireBodyType(ctx, 'json');
    const raw = rawBodyOf(ctx) ?? JSON.stringify(ctx.request.body);
    const reply = await handleWalletCallback(
      {
        db,
        payments: deps.payments,
        client: deps.temporal.client,
        taskQueue: deps.temporal.taskQueue,
        config,
        logger,
        notifier,
        alerts,
      },
      ctx.request.body,
      raw,
      ctx.state.requestId,
    );
    ctx.status = reply.status;
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(reply.body);
  });

  return r;
}
