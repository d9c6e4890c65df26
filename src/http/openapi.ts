/**
 * One OpenAPI registry: each router module registers its paths and zod schemas here,
 * and /openapi.json is generated from it.
 */
import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV3 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export const registry = new OpenAPIRegistry();

export const ApiKeyAuth = registry.registerComponent('securitySchemes', 'ApiKeyAuth', {
  type: 'apiKey',
  in: 'header',
  name: 'X-API-Key',
});

export const PaymentError = registry.register(
  'PaymentError',
  z.object({
    statusCode: z.number().int(),
    body: z.object({ error: z.string(), code: z.string(), details: z.record(z.unknown()) }),
  }),
);

export const CallbackError = registry.register(
  'CallbackError',
  z.object({ statusCode: z.number().int(), body: z.object({ error: z.string(), message: z.string() }) }),
);

/** Success envelope {statusCode, body} around a body schema. */
export const envelope = <T extends z.ZodTypeAny>(body: T) => z.object({ statusCode: z.literal(200), body });

export const errorResponses = (codes: number[], schema: z.ZodTypeAny = PaymentError) =>
  Object.fromEntries(codes.map((c) => [String(c), { description: `error (${c})`, content: { 'application/json': { schema } } }]));

let cached: unknown;
export function openApiDocument(): unknown {
  cached ??= new OpenApiGeneratorV3(registry.definitions).generateDocument({
    openapi: '3.0.3',
    info: {
      title: 'Talat',
      version: '2.0.0',
      description:
        'Storefront, payment and callback APIs of an online grocery shop. Payments run as Temporal workflows. Amounts are THB on the wire (at most 2 decimals), integer satang inside.',
    },
    servers: [{ url: '/' }],
  });
  return cached;
}

export { z };
