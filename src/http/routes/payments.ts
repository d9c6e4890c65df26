/** Payment API routes (SPEC.md "Payment API"). */
import Router from '@koa/router';
import type { AppDeps } from '../app';
import { thbToSatang, satangToThb } from '../../domain/money';
import { newId } from '../../ids';
import { startPaymentWorkflow } from '../../temporal/payments';
import { WORKFLOWS } from '../../temporal/names';
import type { CardPaymentInput } from '../../../workflows/payment';
import { envelope, errorResponses, registry, z } from '../openapi';
import { validate } from '../validate';

/** THB amount on the wire (number or numeric text, at most 2 decimals) -> integer satang. */
export const Amount = z
  .union([z.number(), z.string()])
  .transform((v, ctx) => {
    const r = thbToSatang(v);
    if (!r.ok) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `amount is invalid (${r.reason}): a positive THB amount with at most 2 decimals, up to 1,000,000` });
      return z.NEVER;
    }
    return r.satang;
  })
  .openapi({ type: 'number', example: 250.5, description: 'THB, at most 2 decimals, > 0, <= 1,000,000' });

const Id = z.string().min(1).max(64).regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only');
const HttpUrl = z
  .string()
  .max(2048)
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');

export const CardPaymentRequest = registry.register(
  'CardPaymentRequest',
  z
    .object({
      orderId: Id,
      userId: Id,
      amount: Amount,
      token: z.string().min(1).max(256),
      callback: HttpUrl.optional(),
    })
    .strict(),
);

const PaymentCreated = registry.register(
  'PaymentCreated',
  z.object({ paymentId: z.string(), orderId: z.string(), method: z.string(), status: z.string(), amount: z.number() }),
);

registry.registerPath({
  method: 'post',
  path: '/cardpayment',
  summary: 'Start a card payment (public, form-encoded)',
  tags: ['payment'],
  request: { body: { content: { 'application/x-www-form-urlencoded': { schema: CardPaymentRequest } } } },
  responses: {
    200: { description: 'payment started (or the existing payment of this order)', content: { 'application/json': { schema: envelope(PaymentCreated) } } },
    ...errorResponses([400, 409, 413, 503]),
  },
});

export function paymentRoutes(deps: AppDeps): Router {
  const r = new Router();

  r.post('/cardpayment', async (ctx) => {
    const req = validate(CardPaymentRequest, ctx.request.body);
    const paymentId = newId('pay');
    const input: CardPaymentInput = {
      paymentId,
      orderId: req.orderId,
      userId: req.userId,
      amountSatang: req.amount,
      mode: deps.config.production ? 'live' : 'sandbox',
      callbackUrl: req.callback,
      timeoutSeconds: deps.config.payments.cardTimeoutSeconds,
    };
    const started = await startPaymentWorkflow(deps.temporal.client, {
      taskQueue: deps.temporal.taskQueue,
      workflowType: WORKFLOWS.card,
      memo: { paymentId, orderId: req.orderId, method: 'card', amountSatang: req.amount },
      args: [input],
    });
    ctx.body = {
      statusCode: 200,
      body: { paymentId: started.paymentId, orderId: req.orderId, method: 'card', status: 'pending', amount: satangToThb(req.amount) },
    };
  });

  return r;
}
