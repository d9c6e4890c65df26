/**
 * Webhook management in the payment API (scope webhooks:manage): /webhooks/endpoints (register,
 * list, get, PATCH, DELETE; rotate-secret: a new secret shown once, the old one signs for 24 h more;
 * attempts; recover: resend what failed since a time, in a background workflow),
 * /webhooks/messages/{msgId}/resend, and /webhooks/dead-letters (list, replay). Which events an
 * endpoint receives: activities/webhooks/index.ts.
 */
import type { Mode } from '../domain/mode';
import Router from '@koa/router';
import type { AppDeps } from '../http/deps';
import { AppError, ErrorCode } from '../domain/errors';
import { DEFAULT_RETRY_SCHEDULE_S, RETRY_SCHEDULE_LIMITS, SUBSCRIBABLE_EVENT_TYPES } from './index';
import { taskQueueOf } from '../domain/temporal';
import {
  webhookRecoverWorkflowId,
  webhookReplayWorkflowId,
  webhookResendWorkflowId,
  WebhookWorkflowType,
  type AttemptResult,
  type WebhookRecoverWorkflow,
  type WebhookReplayWorkflow,
  type WebhookResendWorkflow,
} from './index';
import { TEMPORAL_CALL_TIMEOUT_MS, withinDeadline } from '../temporal/calls';
import { PageQuery, pageFields } from '../http/pagination';
import type { Client } from '@temporalio/client';
import {
  createEndpoint,
  getDeadLetter,
  getEndpoint,
  getMessage,
  listAttempts,
  listDeadLetters,
  listEndpoints,
  removeEndpoint,
  rotateSecret,
  updateEndpoint,
} from './endpoints';
import { urlProblem } from './url-policy';
import { requireApiKey } from '../http/middleware/api-key';
import { PaymentStatusUpdated, registry, z } from '../http/openapi';
import { validate } from '../http/validate';
import { apiErrors, clockOf, guards, rateLimitHeaders, security } from '../http/guards';

const SCOPE = 'webhooks:manage';

const EventTypes = z.array(z.enum(SUBSCRIBABLE_EVENT_TYPES)).max(SUBSCRIBABLE_EVENT_TYPES.length).nullable().openapi({
  description:
    'event types to receive: payment.status.updated (every status) or one status (payment.paid, payment.refunded, ...), order.updated (every order step) or one step (order.adjusted, order.settled, ...); null or [] = every type',
});
const L = RETRY_SCHEDULE_LIMITS;
const RetrySchedule = z
  .array(z.number().int().min(L.minStepS).max(L.maxStepS))
  .max(L.maxSteps)
  .refine((s) => s.reduce((a, b) => a + b, 0) <= L.maxTotalS, {
    message: `the waits add up to more than ${L.maxTotalS} s (7 days)`,
  })
  .nullable()
  .openapi({
    description:
      `after the first attempt and the retries 1 s, 2 s and 4 s later, the message is dead-lettered and retried again ` +
      `after each of these waits, in seconds (at most ${L.maxSteps} waits of ${L.minStepS} to ${L.maxStepS} s, ` +
      `${L.maxTotalS} s in all), until a 2xx; then the dead letter gives up. [] = no more retries; null or absent = ` +
      `the default [${DEFAULT_RETRY_SCHEDULE_S.join(', ')}] (1 min ... 24 h: 3 days 3 h 46 min in all)`,
    example: [60, 600, 3600, 21_600, 86_400],
  });
const endpointFields = {
  url: z.string().max(2048).openapi({
    example: 'https://example.com/hooks/talat',
    description:
      'http(s) (https in production) to a public host: names are resolved at registration and at every connection, and every address must be public unicast (loopback only with WEBHOOK_ALLOW_LOOPBACK=on, outside production)',
  }),
  description: z.string().max(500).optional(),
  publicPayments: z.boolean().optional().openapi({
    description:
      "also receive the events of payments made without an API key (public POST /cardpayment) in this key's mode",
  }),
  eventTypes: EventTypes.optional(),
  disabled: z
    .boolean()
    .optional()
    .openapi({ description: 'a disabled endpoint receives no new messages (default false)' }),
  retrySchedule: RetrySchedule.optional(),
};
const EndpointIn = registry.register(
  'WebhookEndpointIn',
  z
    .object(endpointFields)
    .strict()
    .openapi({
      example: {
        url: 'https://example.com/hooks/talat',
        description: 'order service',
        eventTypes: ['payment.paid', 'payment.refunded', 'payment.partially_refunded'],
      },
    }),
);
const EndpointPatch = registry.register(
  'WebhookEndpointPatch',
  z
    .object(endpointFields)
    .partial()
    .strict()
    .openapi({ example: { url: 'https://example.com/hooks/talat-v2', disabled: false } }),
);
const endpointExample = {
  id: 'ep_4f9c2d1e8b7a46c3a2d5e6f708192a3b',
  url: 'https://example.com/hooks/talat',
  description: 'order service',
  publicPayments: false,
  mode: 'live' as const,
  eventTypes: ['payment.paid', 'payment.refunded', 'payment.partially_refunded'],
  disabled: false,
  retrySchedule: [...DEFAULT_RETRY_SCHEDULE_S],
  createdAt: '2026-11-22T07:58:12.407Z',
};
const EndpointOut = registry.register(
  'WebhookEndpointOut',
  z
    .object({
      id: z.string(),
      url: z.string(),
      description: z.string(),
      publicPayments: z.boolean(),
      mode: z.enum(['live', 'sandbox']),
      eventTypes: z.array(z.string()).nullable(),
      disabled: z.boolean(),
      retrySchedule: z.array(z.number().int()).openapi({
        description: "the waits (s) in effect after the 1, 2 and 4 s retries: the endpoint's own or the default",
      }),
      createdAt: z.string(),
    })
    .openapi({ example: endpointExample }),
);
const SecretRotated = registry.register(
  'WebhookSecretRotated',
  z
    .object({
      id: z.string(),
      secret: z.string().openapi({ description: 'the new whsec_ secret, shown only in this response' }),
      previousSecretExpiresAt: z.string().openapi({
        description: 'until then every message carries both signatures (space-separated in webhook-signature)',
      }),
    })
    .openapi({
      example: {
        id: 'ep_4f9c2d1e8b7a46c3a2d5e6f708192a3b',
        secret: 'whsec_Qm9uZ2tva0JhbmdrYXBpU2VjcmV0S2V5MDAwMDAwMDA=',
        previousSecretExpiresAt: '2026-11-23T10:00:00.000Z',
      },
    }),
);
const AttemptOut = registry.register(
  'WebhookAttempt',
  z
    .object({
      id: z.string().openapi({ description: 'att_<n>: the cursor of the list' }),
      messageId: z.string(),
      endpointId: z.string(),
      paymentId: z.string(),
      orderId: z.string(),
      eventStatus: z.string(),
      attempt: z.number().int(),
      kind: z.string().openapi({ description: 'automatic, replay, resend or recover' }),
      status: z.enum(['succeeded', 'failed']),
      statusCode: z.number().int().nullable(),
      error: z.string().nullable(),
      durationMs: z.number().int(),
      createdAt: z.string(),
    })
    .openapi({
      example: {
        id: 'att_1842',
        messageId: 'msg_7b3e9f2a1c5d48e6b0a4c8d2e6f1a3b5',
        endpointId: 'ep_4f9c2d1e8b7a46c3a2d5e6f708192a3b',
        paymentId: 'pay_9d85008165c15b44c1dfeac49cca3667',
        orderId: 'ORD-2001',
        eventStatus: 'paid',
        attempt: 1,
        kind: 'automatic',
        status: 'succeeded',
        statusCode: 204,
        error: null,
        durationMs: 38,
        createdAt: '2026-11-22T08:00:01.544Z',
      },
    }),
);
const AttemptQuery = PageQuery.extend({
  status: z.enum(['succeeded', 'failed']).optional(),
  after: z
    .string()
    .datetime({ offset: true })
    .optional()
    .openapi({ description: 'only attempts made after this time (ISO 8601)' }),
});
const RecoverIn = registry.register(
  'WebhookRecoverIn',
  z
    .object({
      since: z
        .string()
        .datetime({ offset: true })
        .openapi({ description: 'ISO 8601: resend the messages created since then that failed every attempt' }),
    })
    .strict()
    .openapi({ example: { since: '2026-11-22T06:00:00Z' } }),
);
const AttemptResultOut = z
  .object({
    ok: z.boolean(),
    statusCode: z.number().int().optional(),
    error: z.string().optional(),
  })
  .openapi({ example: { ok: true, statusCode: 204 } });
const EndpointCreated = registry.register(
  'WebhookEndpointCreated',
  EndpointOut.extend({
    secret: z.string().openapi({ description: 'whsec_<base64>: the signing secret, shown only in this response' }),
  }).openapi({ example: { ...endpointExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } }),
);
const DeadLetterOut = registry.register(
  'WebhookDeadLetter',
  z
    .object({
      id: z.string(),
      messageId: z.string().openapi({ description: 'the webhook-id header of the message' }),
      endpointId: z.string(),
      url: z.string(),
      paymentId: z.string(),
      orderId: z.string(),
      event: PaymentStatusUpdated,
      status: z.enum(['dead', 'delivered']),
      state: z.enum(['retrying', 'gave_up', 'delivered']).openapi({
        description:
          "retrying: dead after the 1, 2 and 4 s retries and still retried on the endpoint's retrySchedule (status dead); gave_up: every retry failed (status dead; replay or recover it); delivered",
      }),
      nextAttemptAt: z
        .string()
        .nullable()
        .openapi({ description: 'ISO 8601: when a retrying dead letter is tried next; null otherwise' }),
      reason: z.string(),
      attempts: z.number().int(),
      lastStatusCode: z.number().int().nullable(),
      lastError: z.string().nullable(),
      replays: z.number().int(),
      createdAt: z.string(),
      replayedAt: z.string().nullable(),
      deliveredAt: z.string().nullable(),
    })
    .openapi({
      example: {
        id: 'dlq_0e6c1b9a7f3d42c8b5a1e9d3c7f2b6a4',
        messageId: 'msg_7b3e9f2a1c5d48e6b0a4c8d2e6f1a3b5',
        endpointId: 'ep_4f9c2d1e8b7a46c3a2d5e6f708192a3b',
        url: 'https://example.com/hooks/talat',
        paymentId: 'pay_9d85008165c15b44c1dfeac49cca3667',
        orderId: 'ORD-2001',
        event: {
          event: 'payment.status.updated',
          data: {
            orderId: 'ORD-2001',
            status: 'paid',
            amount: 120.5,
            timestamp: '2026-11-22T08:00:01.501Z',
            paymentId: 'pay_9d85008165c15b44c1dfeac49cca3667',
            mode: 'live',
          },
          type: 'payment.paid',
        },
        status: 'dead',
        state: 'retrying',
        nextAttemptAt: '2026-11-22T08:01:08.611Z',
        reason: 'every attempt failed',
        attempts: 4,
        lastStatusCode: 502,
        lastError: null,
        replays: 0,
        createdAt: '2026-11-22T08:00:08.611Z',
        replayedAt: null,
        deliveredAt: null,
      },
    }),
);
const ReplayOut = registry.register(
  'WebhookReplayResult',
  z.object({
    deadLetter: DeadLetterOut,
    attempt: AttemptResultOut,
  }),
);
const DeadLetterQuery = PageQuery.extend({
  status: z.enum(['dead', 'delivered', 'all']).default('dead'),
  state: z
    .enum(['retrying', 'gave_up', 'delivered'])
    .optional()
    .openapi({ description: 'only dead letters in this state (then `status` is not applied)' }),
});
const IdParam = z.object({ id: z.string().openapi({ example: 'ep_4f9c2d1e8b7a46c3a2d5e6f708192a3b' }) });
const MsgParam = z.object({ msgId: z.string().openapi({ example: 'msg_7b3e9f2a1c5d48e6b0a4c8d2e6f1a3b5' }) });

const ok = <T extends z.ZodTypeAny>(status: number, body: T, description: string) => ({
  [status]: {
    description,
    headers: rateLimitHeaders,
    content: { 'application/json': { schema: z.object({ statusCode: z.literal(status), body }) } },
  },
});
const common = { tags: ['webhooks'], security };
registry.registerPath({
  ...common,
  method: 'post',
  path: '/webhooks/endpoints',
  summary: 'Register a webhook endpoint for payment.status.updated',
  request: { body: { content: { 'application/json': { schema: EndpointIn } } } },
  responses: { ...ok(201, EndpointCreated, 'registered'), ...apiErrors([400, 401, 403, 413, 429]) },
});
registry.registerPath({
  ...common,
  method: 'get',
  path: '/webhooks/endpoints',
  summary: "The API key's webhook endpoints, oldest first",
  request: { query: PageQuery },
  responses: {
    ...ok(200, z.object({ endpoints: z.array(EndpointOut), ...pageFields }), 'endpoints'),
    ...apiErrors([400, 401, 403, 429]),
  },
});
registry.registerPath({
  ...common,
  method: 'get',
  path: '/webhooks/endpoints/{id}',
  summary: 'One webhook endpoint',
  request: { params: IdParam },
  responses: { ...ok(200, EndpointOut, 'the endpoint'), ...apiErrors([401, 403, 404, 429]) },
});
registry.registerPath({
  ...common,
  method: 'patch',
  path: '/webhooks/endpoints/{id}',
  summary: 'Change an endpoint: url, description, publicPayments, eventTypes, disabled, retrySchedule',
  request: { params: IdParam, body: { content: { 'application/json': { schema: EndpointPatch } } } },
  responses: { ...ok(200, EndpointOut, 'the changed endpoint'), ...apiErrors([400, 401, 403, 404, 413, 429]) },
});
registry.registerPath({
  ...common,
  method: 'post',
  path: '/webhooks/endpoints/{id}/rotate-secret',
  summary: 'Rotate the signing secret: the new one is returned once; for 24 h messages carry both signatures',
  request: { params: IdParam },
  responses: { ...ok(200, SecretRotated, 'rotated'), ...apiErrors([401, 403, 404, 429]) },
});
registry.registerPath({
  ...common,
  method: 'get',
  path: '/webhooks/endpoints/{id}/attempts',
  summary: "The endpoint's delivery attempts, newest first",
  request: { params: IdParam, query: AttemptQuery },
  responses: {
    ...ok(200, z.object({ attempts: z.array(AttemptOut), ...pageFields }), 'attempts'),
    ...apiErrors([400, 401, 403, 404, 429]),
  },
});
registry.registerPath({
  ...common,
  method: 'post',
  path: '/webhooks/endpoints/{id}/recover',
  summary:
    'Resend every message that failed all its attempts since a time (a background workflow; one per endpoint at a time)',
  request: { params: IdParam, body: { content: { 'application/json': { schema: RecoverIn } } } },
  responses: {
    ...ok(
      202,
      z.object({ endpointId: z.string(), since: z.string(), workflowId: z.string() }).openapi({
        example: {
          endpointId: 'ep_4f9c2d1e8b7a46c3a2d5e6f708192a3b',
          since: '2026-11-22T06:00:00.000Z',
          workflowId: 'webhook-recover-ep_4f9c2d1e8b7a46c3a2d5e6f708192a3b',
        },
      }),
      'recovery started (or already running)',
    ),
    ...apiErrors([400, 401, 403, 404, 409, 429, 503]),
  },
});
registry.registerPath({
  ...common,
  method: 'post',
  path: '/webhooks/messages/{msgId}/resend',
  summary: 'Send a message (webhook-id msg_...) to its endpoint again now: one attempt, signed anew',
  request: { params: MsgParam },
  responses: {
    ...ok(
      200,
      z.object({ messageId: z.string(), attempt: AttemptResultOut }).openapi({
        example: { messageId: 'msg_7b3e9f2a1c5d48e6b0a4c8d2e6f1a3b5', attempt: { ok: true, statusCode: 200 } },
      }),
      'the attempt was made (see attempt.ok)',
    ),
    ...apiErrors([401, 403, 404, 409, 429, 503]),
  },
});
registry.registerPath({
  ...common,
  method: 'delete',
  path: '/webhooks/endpoints/{id}',
  summary: 'Remove a webhook endpoint (its pending retries stop)',
  request: { params: IdParam },
  responses: {
    ...ok(
      200,
      z.object({
        id: z.string().openapi({ example: 'ep_4f9c2d1e8b7a46c3a2d5e6f708192a3b' }),
        deleted: z.literal(true),
      }),
      'removed',
    ),
    ...apiErrors([401, 403, 404, 429]),
  },
});
registry.registerPath({
  ...common,
  method: 'get',
  path: '/webhooks/dead-letters',
  summary:
    "Deliveries that failed the first attempt and the retries after 1 s, 2 s and 4 s: those still retried on the endpoint's retrySchedule (state retrying, nextAttemptAt) and those that gave up",
  request: { query: DeadLetterQuery },
  responses: {
    ...ok(200, z.object({ deadLetters: z.array(DeadLetterOut), ...pageFields }), 'dead letters, newest first'),
    ...apiErrors([400, 401, 403, 429]),
  },
});
registry.registerPath({
  ...common,
  method: 'post',
  path: '/webhooks/dead-letters/{id}/replay',
  summary: 'Deliver a dead letter again (one attempt, signed anew); success marks it delivered',
  request: { params: IdParam },
  responses: {
    ...ok(200, ReplayOut, 'the attempt was made (see attempt.ok)'),
    ...apiErrors([401, 403, 404, 409, 429, 503]),
  },
});

const attemptOut = (a: AttemptResult) => ({
  ok: a.ok,
  ...(a.statusCode !== undefined ? { statusCode: a.statusCode } : {}),
  ...(a.error ? { error: a.error } : {}),
});

/**
 * Start (or join) a workflow that makes one attempt and wait for its result. The attempt is
 * bounded by WEBHOOK_TIMEOUT_MS; waiting much longer means no worker is running it: 503.
 */
async function runOneAttempt(
  client: Client,
  timeoutMs: number,
  id: string,
  start: (client: Client) => Promise<{ result(): Promise<unknown> }>,
): Promise<AttemptResult> {
  // one deadline for the start and the wait; Temporal down -> 503 within seconds (its probe)
  return withinDeadline(
    client,
    timeoutMs + 15_000,
    async () => (await (await start(client)).result()) as AttemptResult,
    () => {
      throw new AppError(
        ErrorCode.SERVICE_UNAVAILABLE,
        'The attempt is still running; list the attempts later to see its outcome',
        { id },
      );
    },
  );
}

export function webhookRoutes(deps: Pick<AppDeps, 'clock' | 'config' | 'db' | 'resolve' | 'temporal'>): Router {
  const r = new Router({ prefix: '/webhooks' });
  const { limited } = guards(deps);
  const auth = requireApiKey(SCOPE);
  const { db, config } = deps;

  r.post('/endpoints', limited, auth, async (ctx) => {
    const input = validate(EndpointIn, ctx.request.body);
    await checkUrl(input.url);
    const created = await createEndpoint(db, config, ctx.state.apiKey!, input);
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { statusCode: 201, body: created };
  });

  r.get('/endpoints', limited, auth, async (ctx) => {
    const q = validate(PageQuery, ctx.query);
    const page = await listEndpoints(db, ctx.state.apiKey!, { limit: q.limit, startingAfter: q.starting_after });
    ctx.body = { statusCode: 200, body: { endpoints: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor } };
  });

  const notFound = (id: string) => new AppError(ErrorCode.NOT_FOUND, 'No such webhook endpoint', { id });
  // the destination policy of the connection, with the same resolver (a name is resolved here and at connect)
  const policy = { ...config.webhooks.urlPolicy, ...(deps.resolve ? { resolve: deps.resolve } : {}) };
  const checkUrl = async (url: string | undefined) => {
    const problem = url === undefined ? undefined : await urlProblem(url, policy);
    if (problem) throw new AppError(ErrorCode.INVALID_INPUT, `url: ${problem}`, { field: 'url' });
  };

  r.get('/endpoints/:id', limited, auth, async (ctx) => {
    const ep = await getEndpoint(db, ctx.state.apiKey!, ctx.params.id);
    if (!ep) throw notFound(ctx.params.id);
    ctx.body = { statusCode: 200, body: ep };
  });

  r.patch('/endpoints/:id', limited, auth, async (ctx) => {
    const patch = validate(EndpointPatch, ctx.request.body);
    await checkUrl(patch.url);
    const ep = await updateEndpoint(db, ctx.state.apiKey!, ctx.params.id, patch);
    if (!ep) throw notFound(ctx.params.id);
    ctx.body = { statusCode: 200, body: ep };
  });

  r.post('/endpoints/:id/rotate-secret', limited, auth, async (ctx) => {
    const rotated = await rotateSecret(db, config, ctx.state.apiKey!, ctx.params.id, clockOf(deps)());
    if (!rotated) throw notFound(ctx.params.id);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { statusCode: 200, body: rotated };
  });

  r.get('/endpoints/:id/attempts', limited, auth, async (ctx) => {
    const q = validate(AttemptQuery, ctx.query);
    const ep = await getEndpoint(db, ctx.state.apiKey!, ctx.params.id);
    if (!ep) throw notFound(ctx.params.id);
    const page = await listAttempts(db, ep.id, {
      status: q.status,
      after: q.after ? new Date(q.after) : undefined,
      limit: q.limit,
      startingAfter: q.starting_after,
    });
    ctx.body = { statusCode: 200, body: { attempts: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor } };
  });

  r.post('/endpoints/:id/recover', limited, auth, async (ctx) => {
    const { since } = validate(RecoverIn, ctx.request.body);
    const ep = await getEndpoint(db, ctx.state.apiKey!, ctx.params.id);
    if (!ep) throw notFound(ctx.params.id);
    if (ep.disabled)
      throw new AppError(ErrorCode.CONFLICT, 'The endpoint is disabled: enable it before recovering', { id: ep.id });
    const workflowId = webhookRecoverWorkflowId(ep.id);
    await withinDeadline(deps.temporal.client, TEMPORAL_CALL_TIMEOUT_MS, () =>
      deps.temporal.client.workflow.start<WebhookRecoverWorkflow>(WebhookWorkflowType.webhookRecover, {
        taskQueue: taskQueueOf('webhooks', deps.temporal.taskQueue),
        workflowId,
        args: [{ endpointId: ep.id, since: new Date(since).toISOString() }],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      }),
    );
    ctx.status = 202;
    ctx.body = { statusCode: 202, body: { endpointId: ep.id, since: new Date(since).toISOString(), workflowId } };
  });

  r.post('/messages/:msgId/resend', limited, auth, async (ctx) => {
    const msg = await getMessage(db, ctx.state.apiKey!, ctx.params.msgId);
    if (!msg) throw new AppError(ErrorCode.NOT_FOUND, 'No such message', { id: ctx.params.msgId });
    if (msg.disabled)
      throw new AppError(ErrorCode.CONFLICT, 'The endpoint is disabled', { id: msg.id, endpointId: msg.endpointId });
    const attempt = await runOneAttempt(deps.temporal.client, config.webhooks.timeoutMs, msg.id, (client) =>
      client.workflow.start<WebhookResendWorkflow>(WebhookWorkflowType.webhookResend, {
        taskQueue: taskQueueOf('webhooks', deps.temporal.taskQueue),
        workflowId: webhookResendWorkflowId(msg.id),
        args: [{ messageId: msg.id, kind: 'resend' }],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      }),
    );
    ctx.body = { statusCode: 200, body: { messageId: msg.id, attempt: attemptOut(attempt) } };
  });

  r.delete('/endpoints/:id', limited, auth, async (ctx) => {
    if (!(await removeEndpoint(db, ctx.state.apiKey!, ctx.params.id)))
      throw new AppError(ErrorCode.NOT_FOUND, 'No such webhook endpoint', { id: ctx.params.id });
    ctx.body = { statusCode: 200, body: { id: ctx.params.id, deleted: true } };
  });

  r.get('/dead-letters', limited, auth, async (ctx) => {
    const q = validate(DeadLetterQuery, ctx.query);
    const page = await listDeadLetters(db, ctx.state.apiKey!, {
      status: q.state || q.status === 'all' ? undefined : q.status,
      state: q.state,
      limit: q.limit,
      startingAfter: q.starting_after,
    });
    ctx.body = {
      statusCode: 200,
      body: { deadLetters: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor },
    };
  });

  r.post('/dead-letters/:id/replay', limited, auth, async (ctx) => {
    ctx.body = { statusCode: 200, body: await replayDeadLetter(deps, ctx.state.apiKey!, ctx.params.id) };
  });

  return r;
}

/** Replay one of `owner`'s dead letters (404 for another's, 409 once delivered): the route's and the console's. */
export async function replayDeadLetter(
  deps: Pick<AppDeps, 'db' | 'config' | 'temporal'>,
  owner: { id: string; mode: Mode },
  id: string,
) {
  const { db, config } = deps;
  const found = await getDeadLetter(db, owner, id);
  if (!found) throw new AppError(ErrorCode.NOT_FOUND, 'No such dead letter', { id });
  if (found.status === 'delivered')
    throw new AppError(ErrorCode.CONFLICT, 'This dead letter was delivered already', { id: found.id });
  const attempt = await runOneAttempt(deps.temporal.client, config.webhooks.timeoutMs, found.id, (client) =>
    client.workflow.start<WebhookReplayWorkflow>(WebhookWorkflowType.webhookReplay, {
      taskQueue: taskQueueOf('webhooks', deps.temporal.taskQueue),
      workflowId: webhookReplayWorkflowId(found.id),
      args: [{ deadLetterId: found.id }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    }),
  );
  return { deadLetter: (await getDeadLetter(db, owner, found.id))!, attempt: attemptOut(attempt) };
}
