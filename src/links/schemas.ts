/** The payment-link API's request and answer schemas (OpenAPI components). */
import { Amount } from '../http/guards';
import { registry, z } from '../http/openapi';
import { pageFields, PageQuery } from '../http/pagination';

export const PaymentLinkIn = registry.register(
  'PaymentLinkRequest',
  z
    .object({
      amount: Amount,
      description: z
        .string()
        .trim()
        .min(1)
        .max(200)
        .refine((s) => ![...s].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127), 'no control characters')
        .openapi({ description: 'what the payer pays for (shown on the link page)', example: 'Mango box, 2 kg' }),
      reusable: z
        .boolean()
        .default(false)
        .openapi({ description: 'false: paid once, then "already paid"; true: each visit makes its own payment' }),
      expiresAt: z
        .string()
        .datetime({ offset: true })
        .optional()
        .openapi({ description: 'ISO 8601; after it the link opens nothing (410)', example: '2026-12-31T16:59:59Z' }),
    })
    .strict()
    .openapi({ example: { amount: 350, description: 'Mango box, 2 kg', reusable: false } }),
);
export type PaymentLinkIn = z.infer<typeof PaymentLinkIn>;

const LinkPayment = z.object({
  orderId: z.string().openapi({ description: 'the payment\'s order id: "<link id>-<visit number>"' }),
  paymentId: z.string().nullable(),
  status: z.string().openapi({ description: 'the payment status; "starting" while its payment is being created' }),
  amount: z.number(),
  createdAt: z.string(),
});

export const PaymentLinkOut = registry.register(
  'PaymentLink',
  z
    .object({
      id: z.string(),
      url: z.string().openapi({ description: 'the short link to paste into a chat: <PUBLIC_BASE_URL>/l/<code>' }),
      amount: z.number(),
      currency: z.literal('THB'),
      description: z.string(),
      reusable: z.boolean(),
      mode: z.enum(['live', 'sandbox']),
      status: z.enum(['active', 'paid', 'expired', 'deactivated']),
      expiresAt: z.string().nullable(),
      deactivatedAt: z.string().nullable(),
      createdAt: z.string(),
      payments: z.array(LinkPayment).openapi({ description: 'the payments its visits made, oldest first' }),
    })
    .openapi({
      example: {
        id: 'plink_5f1c9e2a7b3d40c8a1e6f2b9',
        url: 'https://pay.talat.example/l/Qm9uZ1RoYWlNYW5nb0JveA',
        amount: 350,
        currency: 'THB',
        description: 'Mango box, 2 kg',
        reusable: false,
        mode: 'sandbox',
        status: 'paid',
        expiresAt: null,
        deactivatedAt: null,
        createdAt: '2026-11-27T08:00:00.000Z',
        payments: [
          {
            orderId: 'plink_5f1c9e2a7b3d40c8a1e6f2b9-1',
            paymentId: 'pay_9d85008165c15b44c1dfeac49cca3667',
            status: 'paid',
            amount: 350,
            createdAt: '2026-11-27T08:01:00.000Z',
          },
        ],
      },
    }),
);
export type PaymentLinkOut = z.infer<typeof PaymentLinkOut>;

export const PaymentLinkList = z.object({ links: z.array(PaymentLinkOut), ...pageFields });
export type PaymentLinkList = z.infer<typeof PaymentLinkList>;
export const PaymentLinkQuery = PageQuery;
