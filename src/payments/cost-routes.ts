/**
 * POST /calculate-cost (scope cost:read): the cost of an order at a branch from the catalog in
 * Postgres: shelf prices, active promotions, delivery and payment charges, VAT included.
 * The rules are in src/payments/cost.ts (and README "Payment API").
 */
import Router from '@koa/router';
import type { AppDeps } from '../http/deps';
import {
  calculateCost,
  catalogPromotionOf,
  COST_PAYMENT_METHODS,
  DELIVERY_OPTIONS,
  type CatalogProduct,
  type CatalogPromotion,
} from './cost';
import { readPromotions } from '../db/promotions';
/** What the cost takes of the storefront's catalog (src/storefront/cost-catalog.ts), wired by src/app. */
export interface CatalogReads {
  branchExists(branchId: string): Promise<boolean>;
  productsAt(branchId: string, ids: string[]): Promise<ProductRow[]>;
}

/** A product as the catalog gives it: shelf price and stock at the branch (null when none). */
export interface ProductRow {
  product_id: string;
  group_id: string;
  name_en: string;
  name_th: string;
  vatable: boolean;
  weight_grams: number;
  price_satang: string | null;
  quantity: number | null;
}
import { AppError, ErrorCode } from '../domain/errors';
import { requireApiKey } from '../http/middleware/api-key';
import { envelope, registry, z } from '../http/openapi';
import { validate } from '../http/validate';
import { apiErrors, clockOf, guards, idempotencyHeader, rateLimitHeaders, security } from '../http/guards';

export const MAX_COST_ITEMS = 100;
export const MAX_ITEM_QUANTITY = 999;

export const CalculateCostRequest = registry.register(
  'CalculateCostRequest',
  z
    .object({
      items: z
        .array(
          z
            .object({
              productId: z.string().min(1).max(64).openapi({ example: 'G851378-1' }),
              quantity: z.number().int().min(1).max(MAX_ITEM_QUANTITY),
            })
            .strict(),
        )
        .min(1)
        .max(MAX_COST_ITEMS)
        .superRefine((items, ctx) => {
          const seen = new Set<string>();
          items.forEach((it, i) => {
            if (seen.has(it.productId))
              ctx.addIssue({
                code: z.ZodIssueCode.custom,
                path: [i, 'productId'],
                message: 'each product once: put the total in quantity',
              });
            seen.add(it.productId);
          });
        }),
      branchId: z.string().min(1).max(16).openapi({ example: 'B001' }),
      deliveryOption: z
        .enum(DELIVERY_OPTIONS)
        .openapi({ description: 'standard (40 THB, free from 1,000 THB), express (99 THB) or pickup (free)' }),
      paymentMethod: z.enum(COST_PAYMENT_METHODS),
    })
    .strict()
    .openapi({
      example: {
        items: [
          { productId: 'G851378-1', quantity: 10 },
          { productId: 'G784972-1', quantity: 2 },
        ],
        branchId: 'B001',
        deliveryOption: 'standard',
        paymentMethod: 'qr',
      },
    }),
);

const Money = registry.register('Money', z.object({ satang: z.number().int(), thb: z.number() }));
const PromotionType = z.enum(['multi_buy', 'percent_off', 'fixed_price']);

const CostBreakdownOut = registry.register(
  'CostBreakdown',
  z
    .object({
      branchId: z.string(),
      pricedAt: z.string().openapi({ description: 'the moment whose prices and promotions were used (ISO 8601 UTC)' }),
      currency: z.literal('THB'),
      deliveryOption: z.enum(DELIVERY_OPTIONS),
      paymentMethod: z.enum(COST_PAYMENT_METHODS),
      lines: z.array(
        z.object({
          productId: z.string(),
          name: z.string(),
          nameTh: z.string(),
          quantity: z.number().int(),
          vatable: z.boolean(),
          unitPrice: Money,
          gross: Money,
          discount: Money,
          total: Money,
          vat: Money.openapi({ description: 'VAT included in this line (7/107 of total for vatable goods)' }),
          promotion: z
            .object({ promotionId: z.string(), type: PromotionType, title: z.string(), titleTh: z.string() })
            .nullable(),
        }),
      ),
      promotions: z.array(
        z.object({
          promotionId: z.string(),
          type: PromotionType,
          title: z.string(),
          titleTh: z.string(),
          applications: z.number().int(),
          discount: Money,
        }),
      ),
      charges: z.array(
        z.object({
          code: z.enum(['delivery', 'heavy_surcharge', 'payment_fee']),
          description: z.string(),
          vatable: z.boolean(),
          amount: Money,
        }),
      ),
      weightGrams: z.number().int(),
      totals: z.object({
        itemsGross: Money,
        discount: Money,
        items: Money,
        charges: Money,
        total: Money,
        vatable: Money,
        vat: Money.openapi({ description: 'VAT included in total: 7/107 of the vatable amount, on the sum' }),
        exempt: Money,
      }),
    })
    .openapi({
      example: {
        branchId: 'B001',
        pricedAt: '2026-11-22T08:00:00.000Z',
        currency: 'THB',
        deliveryOption: 'standard',
        paymentMethod: 'qr',
        lines: [
          {
            productId: 'G851378-1',
            name: 'Mama Instant Noodles, Tom Yum Shrimp Creamy 55 g',
            nameTh: 'บะหมี่กึ่งสำเร็จรูป มาม่า รสต้มยำกุ้งน้ำข้น 55 กรัม',
            quantity: 10,
            vatable: true,
            unitPrice: { satang: 700, thb: 7 },
            gross: { satang: 7000, thb: 70 },
            discount: { satang: 1000, thb: 10 },
            total: { satang: 6000, thb: 60 },
            vat: { satang: 393, thb: 3.93 },
            promotion: {
              promotionId: 'PR2611001',
              type: 'multi_buy',
              title: 'Mama noodles, any 10 packs for ฿60',
              titleTh: 'มาม่า คละรส 10 ซอง 60 บาท',
            },
          },
          {
            productId: 'G784972-1',
            name: 'Nam Dok Mai Mango 1 kg',
            nameTh: 'มะม่วงน้ำดอกไม้สีทอง 1 กก.',
            quantity: 2,
            vatable: false,
            unitPrice: { satang: 13900, thb: 139 },
            gross: { satang: 27800, thb: 278 },
            discount: { satang: 0, thb: 0 },
            total: { satang: 27800, thb: 278 },
            vat: { satang: 0, thb: 0 },
            promotion: null,
          },
        ],
        promotions: [
          {
            promotionId: 'PR2611001',
            type: 'multi_buy',
            title: 'Mama noodles, any 10 packs for ฿60',
            titleTh: 'มาม่า คละรส 10 ซอง 60 บาท',
            applications: 1,
            discount: { satang: 1000, thb: 10 },
          },
        ],
        charges: [
          { code: 'delivery', description: 'Standard delivery', vatable: true, amount: { satang: 4000, thb: 40 } },
          { code: 'payment_fee', description: 'Payment fee (qr)', vatable: true, amount: { satang: 0, thb: 0 } },
        ],
        weightGrams: 2760,
        totals: {
          itemsGross: { satang: 34800, thb: 348 },
          discount: { satang: 1000, thb: 10 },
          items: { satang: 33800, thb: 338 },
          charges: { satang: 4000, thb: 40 },
          total: { satang: 37800, thb: 378 },
          vatable: { satang: 10000, thb: 100 },
          vat: { satang: 654, thb: 6.54 },
          exempt: { satang: 27800, thb: 278 },
        },
      },
    }),
);

registry.registerPath({
  method: 'post',
  path: '/calculate-cost',
  summary: 'Calculate the cost of an order',
  description:
    'Prices from the catalog, the promotions active now (multi_buy, percent_off, fixed_price; at most one per product), delivery and payment charges; shelf prices include 7% VAT for vatable goods and the VAT portion is shown per line and in total. Amounts in satang and THB. Unknown product or branch -> 404 NOT_FOUND; a quantity above the branch stock -> 400 INVALID_INPUT with details.reason out_of_stock. Scope cost:read.',
  tags: ['payment'],
  security,
  request: { headers: idempotencyHeader, body: { content: { 'application/json': { schema: CalculateCostRequest } } } },
  responses: {
    200: {
      description: 'the breakdown',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(CostBreakdownOut) } },
    },
    ...apiErrors([400, 401, 403, 404, 409, 413, 422, 429]),
  },
});

export function costRoutes(deps: Pick<AppDeps, 'clock' | 'config' | 'db'> & { catalog: CatalogReads }): Router {
  const r = new Router();
  const { limited, idempotent } = guards(deps);
  const clock = clockOf(deps);

  r.post('/calculate-cost', limited, requireApiKey('cost:read'), idempotent, async (ctx) => {
    const req = validate(CalculateCostRequest, ctx.request.body);
    const at = clock();

    if (!(await deps.catalog.branchExists(req.branchId)))
      throw new AppError(ErrorCode.NOT_FOUND, `Unknown branch ${req.branchId}`, {
        field: 'branchId',
        branchId: req.branchId,
      });

    const ids = req.items.map((i) => i.productId);
    const rows = await deps.catalog.productsAt(req.branchId, ids);
    const byId = new Map(rows.map((row) => [row.product_id, row]));

    const unknown = req.items
      .map((it, index) => ({ ...it, index }))
      .filter((it) => !byId.get(it.productId)?.price_satang);
    if (unknown.length) {
      throw new AppError(
        ErrorCode.NOT_FOUND,
        `Unknown product${unknown.length > 1 ? 's' : ''}: ${unknown.map((u) => u.productId).join(', ')}`,
        {
          field: `items.${unknown[0].index}.productId`,
          productIds: unknown.map((u) => u.productId),
        },
      );
    }

    const short = req.items
      .map((it, index) => ({
        index,
        productId: it.productId,
        requested: it.quantity,
        available: byId.get(it.productId)!.quantity ?? 0,
      }))
      .filter((it) => it.requested > it.available);
    if (short.length) {
      throw new AppError(
        ErrorCode.INVALID_INPUT,
        `Not enough stock at branch ${req.branchId} for ${short.map((s) => s.productId).join(', ')}`,
        {
          field: `items.${short[0].index}.quantity`,
          reason: 'out_of_stock',
          branchId: req.branchId,
          items: short.map(({ productId, requested, available }) => ({ productId, requested, available })),
        },
      );
    }

    const products = new Map<string, CatalogProduct>(
      rows.map((row) => [
        row.product_id,
        {
          productId: row.product_id,
          groupId: row.group_id,
          nameEn: row.name_en,
          nameTh: row.name_th,
          priceSatang: Number(row.price_satang),
          vatable: row.vatable,
          weightGrams: row.weight_grams,
        },
      ]),
    );
    const when = new Date(at);
    const promotions: CatalogPromotion[] = (await readPromotions(deps.db, when)).map(catalogPromotionOf);

    const breakdown = calculateCost({
      items: req.items,
      products,
      promotions,
      deliveryOption: req.deliveryOption,
      paymentMethod: req.paymentMethod,
      at,
    });
    ctx.body = { statusCode: 200, body: { branchId: req.branchId, pricedAt: when.toISOString(), ...breakdown } };
  });

  return r;
}
