/**
 * Partner bank routes: POST /bank/createuser, POST /bank/createorder (scope bank:write) and
 * GET /bank/user/{userId} (scope bank:read). Each call runs through bankRequestWorkflow (retries
 * per Temporal policy, none on a 4xx); sandbox keys reach the bank simulator, live keys
 * BANK_API_URL. The bank's answers map to the payment API's codes:
 *   404 -> NOT_FOUND, 409 -> CONFLICT, other 4xx about the request -> INVALID_INPUT,
 *   unreachable, 5xx after retries, or not configured -> SERVICE_UNAVAILABLE.
 * Users and orders belong to the key that created them (src/bank/owners.ts): another key's user
 * answers as an unknown one (404), another key's ids as taken with other details (409).
 */
import Router from '@koa/router';
import type { AppDeps } from '../http/deps';
import { taskQueueOf } from '../domain/temporal';
import type { BankCall, BankOutcome } from './index';
import { AppError, ErrorCode } from '../domain/errors';
import type { ApiKeyInfo } from '../domain/api-keys';
import { satangToThb } from '../domain/money';
import { callBankViaWorkflow } from './service';
import { claimBankObject, ownsBankObject, releaseBankObject, type BankObject } from './owners';
import { requireApiKey } from '../http/middleware/api-key';
import { envelope, registry, z } from '../http/openapi';
import { validate } from '../http/validate';
import {
  Amount,
  apiErrors,
  guards,
  Id,
  idempotencyHeader,
  rateLimitHeaders,
  requireProvider,
  security,
} from '../http/guards';

export const BankCreateUserRequest = registry.register(
  'BankCreateUserRequest',
  z
    .object({
      userId: Id.openapi({ description: "the shop's user id" }),
      name: z.string().trim().min(1).max(200),
      email: z.string().email().max(200).optional(),
      phone: z
        .string()
        .regex(/^\+?[0-9 -]{6,20}$/, 'a phone number')
        .optional(),
    })
    .strict()
    .openapi({
      example: { userId: 'u-1', name: 'Somchai Jaidee', email: 'somchai@example.co.th', phone: '+66812345678' },
    }),
);

export const BankCreateOrderRequest = registry.register(
  'BankCreateOrderRequest',
  z
    .object({
      orderId: Id,
      userId: Id.openapi({ description: 'a user created with /bank/createuser' }),
      amount: Amount,
      description: z.string().max(500).optional(),
    })
    .strict()
    .openapi({ example: { orderId: 'ORD-2001', userId: 'u-1', amount: 120.5, description: 'weekly groceries' } }),
);

/** One bank order as the API answers it (the examples of /openapi.json). */
const bankOrderExample = {
  orderId: 'ORD-2001',
  bankOrderId: 'ord_a786bdf2c97a440eae26b83c97659589',
  userId: 'u-1',
  amount: 120.5,
  currency: 'THB',
  description: 'weekly groceries',
  status: 'created',
  createdAt: '2026-11-26T13:15:07.242Z',
};
const BankOrderOut = registry.register(
  'BankOrder',
  z
    .object({
      orderId: z.string(),
      bankOrderId: z.string(),
      userId: z.string(),
      amount: z.number(),
      currency: z.string(),
      description: z.string().nullable(),
      status: z.string(),
      createdAt: z.string(),
    })
    .openapi({ example: bankOrderExample }),
);

const BankUserOut = registry.register(
  'BankUser',
  z
    .object({
      userId: z.string(),
      bankUserId: z.string(),
      name: z.string(),
      email: z.string().nullable(),
      phone: z.string().nullable(),
      status: z.string(),
      createdAt: z.string(),
      orders: z
        .array(BankOrderOut)
        .optional()
        .openapi({ description: 'GET /bank/user only: the orders of the user at the bank' }),
    })
    .openapi({
      example: {
        userId: 'u-1',
        bankUserId: 'usr_6ce942509e344c16970516cf93d335d6',
        name: 'Somchai Jaidee',
        email: 'somchai@example.co.th',
        phone: '+66812345678',
        status: 'active',
        createdAt: '2026-11-26T13:15:07.161Z',
        orders: [bankOrderExample],
      },
    }),
);

const bankDescription =
  'Runs as a Temporal workflow whose activity calls the partner bank (BANK_API_URL; sandbox keys: the built-in simulator), retrying network errors and 5xx up to 3 attempts, never a 4xx. The bank unreachable -> 503 SERVICE_UNAVAILABLE.';

registry.registerPath({
  method: 'post',
  path: '/bank/createuser',
  summary: 'Create a user at the partner bank',
  description: `${bankDescription} The same user again with the same details returns the user; other details, or a user id another key created -> 409. Users belong to the key that created them. Scope bank:write.`,
  tags: ['bank'],
  security,
  request: { headers: idempotencyHeader, body: { content: { 'application/json': { schema: BankCreateUserRequest } } } },
  responses: {
    200: {
      description: 'the user at the bank',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(BankUserOut) } },
    },
    ...apiErrors([400, 401, 403, 409, 413, 422, 429, 503]),
  },
});

registry.registerPath({
  method: 'post',
  path: '/bank/createorder',
  summary: 'Create an order at the partner bank',
  description: `${bankDescription} The user must exist at the bank and have been created with this key (404 otherwise, the same answer). The same order again returns it; other details, or an order id another key used -> 409. Scope bank:write.`,
  tags: ['bank'],
  security,
  request: {
    headers: idempotencyHeader,
    body: { content: { 'application/json': { schema: BankCreateOrderRequest } } },
  },
  responses: {
    200: {
      description: 'the order at the bank',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(BankOrderOut) } },
    },
    ...apiErrors([400, 401, 403, 404, 409, 413, 422, 429, 503]),
  },
});

registry.registerPath({
  method: 'get',
  path: '/bank/user/{userId}',
  summary: 'A user at the partner bank, with their orders',
  description: `${bankDescription} Only a user created with this key: any other answers 404 as an unknown user. Scope bank:read.`,
  tags: ['bank'],
  security,
  request: { params: z.object({ userId: Id.openapi({ example: 'u-1' }) }) },
  responses: {
    200: {
      description: 'the user at the bank',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(BankUserOut) } },
    },
    ...apiErrors([400, 401, 403, 404, 429, 503]),
  },
});

type Json = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function orderOut(o: Json) {
  return {
    orderId: str(o.orderId) ?? '',
    bankOrderId: str(o.bankOrderId) ?? '',
    userId: str(o.userId) ?? '',
    amount: satangToThb(Number(o.amountSatang ?? 0)),
    currency: str(o.currency) ?? 'THB',
    description: str(o.description),
    status: str(o.status) ?? 'unknown',
    createdAt: str(o.createdAt) ?? '',
  };
}

function userOut(u: Json) {
  return {
    userId: str(u.userId) ?? '',
    bankUserId: str(u.bankUserId) ?? '',
    name: str(u.name) ?? '',
    email: str(u.email),
    phone: str(u.phone),
    status: str(u.status) ?? 'unknown',
    createdAt: str(u.createdAt) ?? '',
    ...(Array.isArray(u.orders) ? { orders: (u.orders as Json[]).map(orderOut) } : {}),
  };
}

/** The bank's answer -> the response body, or the payment API error it stands for. */
function unwrap(outcome: BankOutcome, subject: Record<string, string>): Json {
  if (outcome.ok) {
    if (!outcome.body || typeof outcome.body !== 'object')
      throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'The bank answered something unreadable', { service: 'bank' });
    return outcome.body as Json;
  }
  if (outcome.kind === 'unavailable')
    throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'The bank is unavailable, try again later', { service: 'bank' });
  const body = (outcome.body && typeof outcome.body === 'object' ? outcome.body : {}) as Json;
  const details = { ...subject, service: 'bank', bankCode: str(body.code) ?? undefined };
  switch (outcome.status) {
    case 404:
      throw new AppError(ErrorCode.NOT_FOUND, `Not found at the bank: ${outcome.message}`, details);
    case 409:
      throw new AppError(ErrorCode.CONFLICT, `The bank refused a conflicting request: ${outcome.message}`, details);
    case 401:
    case 403:
      // our credentials at the bank: not something the caller can fix
      throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'The bank refused our credentials', { service: 'bank' });
    default:
      throw new AppError(ErrorCode.INVALID_INPUT, `The bank rejected the request: ${outcome.message}`, {
        ...details,
        field: str(body.field) ?? undefined,
      });
  }
}

/** What the bank answers for a user it does not have, or an id taken with other details. */
const bankRefusal = (status: 404 | 409, code: string, message: string): BankOutcome => ({
  ok: false,
  kind: 'rejected',
  status,
  body: { code, message },
  message,
});
const unknownUser = (userId: string) => bankRefusal(404, 'user_not_found', `no user ${userId}`);
const takenBy = (kind: BankObject, id: string) =>
  bankRefusal(409, `${kind}_exists`, `${kind} ${id} exists with other details`);

export function bankRoutes(deps: Pick<AppDeps, 'clock' | 'config' | 'db' | 'temporal'>): Router {
  const r = new Router();
  const { limited, idempotent } = guards(deps);
  const call = (c: BankCall) => {
    requireProvider(deps, 'bank', c.mode);
    return callBankViaWorkflow(deps.temporal.client, {
      // bank calls run on the background queue (docs/deploy.md): never in the payments' slots
      taskQueue: taskQueueOf('background', deps.temporal.taskQueue),
      call: c,
      providerTimeoutMs: deps.config.payments.providerTimeoutMs,
      signingKey: deps.config.results.signingKey,
    });
  };
  /** A create under the key's claim of the id: another key's id is refused as taken; a refused create gives the claim up. */
  const owned = async (key: ApiKeyInfo, kind: BankObject, id: string, create: () => Promise<BankOutcome>) => {
    const claim = await claimBankObject(deps.db, kind, key.mode, id, key.id);
    if (!claim.mine) return takenBy(kind, id);
    const outcome = await create();
    if (claim.fresh && !outcome.ok && outcome.kind === 'rejected')
      await releaseBankObject(deps.db, kind, key.mode, id, key.id);
    return outcome;
  };

  r.post('/bank/createuser', limited, requireApiKey('bank:write'), idempotent, async (ctx) => {
    const req = validate(BankCreateUserRequest, ctx.request.body);
    const key = ctx.state.apiKey!;
    const outcome = await owned(key, 'user', req.userId, () => call({ op: 'createUser', mode: key.mode, body: req }));
    ctx.body = { statusCode: 200, body: userOut(unwrap(outcome, { userId: req.userId })) };
  });

  r.post('/bank/createorder', limited, requireApiKey('bank:write'), idempotent, async (ctx) => {
    const req = validate(BankCreateOrderRequest, ctx.request.body);
    const key = ctx.state.apiKey!;
    const outcome = !(await ownsBankObject(deps.db, 'user', key.mode, req.userId, key.id))
      ? unknownUser(req.userId)
      : await owned(key, 'order', req.orderId, () =>
          call({
            op: 'createOrder',
            mode: key.mode,
            body: {
              orderId: req.orderId,
              userId: req.userId,
              amountSatang: req.amount,
              currency: 'THB',
              description: req.description,
            },
          }),
        );
    ctx.body = { statusCode: 200, body: orderOut(unwrap(outcome, { orderId: req.orderId, userId: req.userId })) };
  });

  r.get('/bank/user/:userId', limited, requireApiKey('bank:read'), async (ctx) => {
    const { userId } = validate(z.object({ userId: Id }), { userId: ctx.params.userId });
    const key = ctx.state.apiKey!;
    const outcome = (await ownsBankObject(deps.db, 'user', key.mode, userId, key.id))
      ? await call({ op: 'getUser', mode: key.mode, userId })
      : unknownUser(userId);
    ctx.body = { statusCode: 200, body: userOut(unwrap(outcome, { userId })) };
  });

  return r;
}
