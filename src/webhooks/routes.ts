/**
 * Webhook management in the payment API (API key with scope webhooks:manage):
 *   POST   /webhooks/endpoints                  register an endpoint; its secret is in this response only
 *   GET    /webhooks/endpoints                  the key's endpoints
 *   DELETE /webhooks/endpoints/{id}             remove one
 *   GET    /webhooks/dead-letters               deliveries that failed every attempt (?status=dead|delivered|all)
 *   POST   /webhooks/dead-letters/{id}/replay   one more attempt now; success marks it delivered
 * Which events an endpoint receives: see activities/webhooks.ts (and the README).
 */
import Router from '@koa/router';
import type { AppDeps } from '../http/deps';
import { AppError, ErrorCode } from '../domain/errors';
import { webhookReplayWorkflowId, WorkflowType, type AttemptResult, type WebhookReplayWorkflow } from '../domain/workflow-contract';
import { withTemporal } from '../temporal/payments';
import { createEndpoint, getDeadLetter, listDeadLetters, listEndpoints, removeEndpoint } from './endpoints';
import { urlProblem } from './http';
import { requireApiKey } from '../http/middleware/api-key';
import { registry, z } from '../http/openapi';
import { validate } from '../http/validate';
import { apiErrors, guards, rateLimitHeaders, security } from '../http/guards';

const SCOPE = 'webhooks:manage';

const EndpointIn = registry.register(
  'WebhookEndpointIn',
  z
    .object({
      url: z.string().max(2048).openapi({ example: 'https://shop.example/hooks/talat', description: 'http(s); https and a public address in production' }),
      description: z.string().max(500).optional(),
      publicPayments: z
        .boolean()
        .optional()
        .openapi({ description: 'also receive the events of payments made without an API key (public POST /cardpayment) in this key\'s mode' }),
    })
    .strict(),
);
const EndpointOut = registry.register(
  'WebhookEndpointOut',
  z.object({ id: z.string(), url: z.string(), description: z.string(), publicPayments: z.boolean(), mode: z.enum(['live', 'sandbox']), createdAt: z.string() }),
);
const EndpointCreated = registry.register(
  'WebhookEndpointCreated',
  EndpointOut.extend({ secret: z.string().openapi({ description: 'whsec_<base64>: the signing secret, shown only in this response' }) }),
);
const DeadLetterOut = registry.register(
  'WebhookDeadLetter',
  z.object({
    id: z.string(),
    messageId: z.string().openapi({ description: 'the webhook-id header of the message' }),
    endpointId: z.string(),
    url: z.string(),
    paymentId: z.string(),
    orderId: z.string(),
    event: z.record(z.unknown()).openapi({ description: 'the payment.status.updated body' }),
    status: z.enum(['dead', 'delivered']),
    reason: z.string(),
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    replays: z.number().int(),
    createdAt: z.string(),
    replayedAt: z.string().nullable(),
    deliveredAt: z.string().nullable(),
  }),
);
const ReplayOut = registry.register(
  'WebhookReplayResult',
  z.object({
    deadLetter: DeadLetterOut,
    attempt: z.object({ ok: z.boolean(), statusCode: z.number().int().optional(), error: z.string().optional() }),
  }),
);
const DeadLetterQuery = z.object({
  status: z.enum(['dead', 'delivered', 'all']).default('dead'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
const IdParam = z.object({ id: z.string() });

const ok = <T extends z.ZodTypeAny>(status: number, body: T, description: string) => ({
  [status]: { description, headers: rateLimitHeaders, content: { 'application/json': { schema: z.object({ statusCode: z.literal(status), body }) } } },
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
  summary: "The API key's webhook endpoints",
  responses: { ...ok(200, z.object({ endpoints: z.array(EndpointOut) }), 'endpoints'), ...apiErrors([401, 403, 429]) },
});
registry.registerPath({
  ...common,
  method: 'delete',
  path: '/webhooks/endpoints/{id}',
  summary: 'Remove a webhook endpoint (its pending retries stop)',
  request: { params: IdParam },
  responses: { ...ok(200, z.object({ id: z.string(), deleted: z.literal(true) }), 'removed'), ...apiErrors([401, 403, 404, 429]) },
});
registry.registerPath({
  ...common,
  method: 'get',
  path: '/webhooks/dead-letters',
  summary: 'Deliveries that failed the first attempt and the retries after 1 s, 2 s and 4 s',
  request: { query: DeadLetterQuery },
  responses: { ...ok(200, z.object({ deadLetters: z.array(DeadLetterOut) }), 'dead letters, newest first'), ...apiErrors([400, 401, 403, 429]) },
});
registry.registerPath({
  ...common,
  method: 'post',
  path: '/webhooks/dead-letters/{id}/replay',
  summary: 'Deliver a dead letter again (one attempt, signed anew); success marks it delivered',
  request: { params: IdParam },
  responses: { ...ok(200, ReplayOut, 'the attempt was made (see attempt.ok)'), ...apiErrors([401, 403, 404, 409, 429, 503]) },
});

export function webhookRoutes(deps: AppDeps): Router {
  const r = new Router({ prefix: '/webhooks' });
  const { limited } = guards(deps);
  const auth = requireApiKey(SCOPE);
  const { db, config } = deps;

  r.post('/endpoints', limited, auth, async (ctx) => {
    const input = validate(EndpointIn, ctx.request.body);
    const problem = urlProblem(input.url, config.webhooks.allowPrivateUrls);
    if (problem) throw new AppError(ErrorCode.INVALID_INPUT, `url: ${problem}`, { field: 'url' });
    const created = await createEndpoint(db, config, ctx.state.apiKey!, input);
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { statusCode: 201, body: created };
  });

  r.get('/endpoints', limited, auth, async (ctx) => {
    ctx.body = { statusCode: 200, body: { endpoints: await listEndpoints(db, ctx.state.apiKey!) } };
  });

  r.delete('/endpoints/:id', limited, auth, async (ctx) => {
    if (!(await removeEndpoint(db, ctx.state.apiKey!, ctx.params.id))) throw new AppError(ErrorCode.NOT_FOUND, 'No such webhook endpoint', { id: ctx.params.id });
    ctx.body = { statusCode: 200, body: { id: ctx.params.id, deleted: true } };
  });

  r.get('/dead-letters', limited, auth, async (ctx) => {
    const q = validate(DeadLetterQuery, ctx.query);
    const deadLetters = await listDeadLetters(db, ctx.state.apiKey!, { status: q.status === 'all' ? undefined : q.status, limit: q.limit });
    ctx.body = { statusCode: 200, body: { deadLetters } };
  });

  r.post('/dead-letters/:id/replay', limited, auth, async (ctx) => {
    const owner = ctx.state.apiKey!;
    const found = await getDeadLetter(db, owner, ctx.params.id);
    if (!found) throw new AppError(ErrorCode.NOT_FOUND, 'No such dead letter', { id: ctx.params.id });
    if (found.status === 'delivered') throw new AppError(ErrorCode.CONFLICT, 'This dead letter was delivered already', { id: found.id });
    const attempt = await withTemporal(async () => {
      const handle = await deps.temporal.client.workflow.start<WebhookReplayWorkflow>(WorkflowType.webhookReplay, {
        taskQueue: deps.temporal.taskQueue,
        workflowId: webhookReplayWorkflowId(found.id),
        args: [{ deadLetterId: found.id }],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      });
      // the attempt is bounded by WEBHOOK_TIMEOUT_MS; waiting much longer means no worker is running it
      let timer: NodeJS.Timeout | undefined;
      const tooLong = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'The replay is still running; list the dead letter later to see its outcome', { id: found.id })),
          config.webhooks.timeoutMs + 15_000,
        );
      });
      try {
        return (await Promise.race([handle.result(), tooLong])) as AttemptResult;
      } finally {
        clearTimeout(timer);
      }
    });
    ctx.body = {
      statusCode: 200,
      body: {
        deadLetter: await getDeadLetter(db, owner, found.id),
        attempt: { ok: attempt.ok, ...(attempt.statusCode !== undefined ? { statusCode: attempt.statusCode } : {}), ...(attempt.error ? { error: attempt.error } : {}) },
      },
    };
  });

  return r;
}
