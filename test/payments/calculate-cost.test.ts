/**
 * POST /calculate-cost over the seeded catalog in Postgres, priced at an injected moment
 * (2026-12-01, inside the seed data's promotion season).
 */
import type Koa from 'koa';
import { createApp } from '../../src/app/app';
import { createTestStack, testLogger, type TestStack } from '../support/stack';
import { newKey, paymentError, request } from './support';

let stack: TestStack;
let key: string;
const AT = Date.parse('2026-12-01T12:00:00+07:00');
let app: Koa;
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  key = (await newKey(stack.db, { scopes: ['cost:read'] })).key;
  app = createApp({
    config: stack.config,
    db: stack.db,
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
    logger: testLogger,
    clock: () => AT,
  });
});
afterAll(() => stack.close());

const cost = (body: object, a: Koa = app) =>
  request(a.callback()).post('/calculate-cost').set('X-API-Key', key).send(body);

/** A branch that stocks at least `qty` of every product. */
async function branchStocking(productIds: string[], qty: number): Promise<string> {
  const row = await stack
    .db('inventory')
    .whereIn('product_id', productIds)
    .andWhere('quantity', '>=', qty)
    .groupBy('branch_id')
    .havingRaw('count(*) = ?', [productIds.length])
    .orderBy('branch_id')
    .first('branch_id');
  return row.branch_id;
}

const BASKET = [
  { productId: 'G496879-2', quantity: 1 }, // bread 45 THB, vatable  } PR2611006: any 2 for 85 THB
  { productId: 'G310648-2', quantity: 1 }, // bread 52 THB, vatable  }
  { productId: 'G195396-1', quantity: 1 }, // wagyu 590 THB, exempt: PR2611017 15% off
  { productId: 'G544071-3', quantity: 2 }, // eggs 149 THB, exempt: PR2611024 fixed 139 THB
];

describe('POST /calculate-cost', () => {
  it('prices a basket line by line with multi-buy, percent-off and fixed-price promotions, delivery and VAT', async () => {
    const branchId = await branchStocking(
      BASKET.map((b) => b.productId),
      2,
    );
    const res = await cost({ items: BASKET, branchId, deliveryOption: 'standard', paymentMethod: 'card' });
    expect(res.status).toBe(200);
    const b = res.body.body;
    expect(b).toMatchObject({
      branchId,
      pricedAt: new Date(AT).toISOString(),
      currency: 'THB',
      deliveryOption: 'standard',
      paymentMethod: 'card',
    });
    const lines = Object.fromEntries(b.lines.map((l: { productId: string }) => [l.productId, l]));
    // 2 breads: 4500 + 5200 = 9700 for 8500 -> 1200 saved, spread by price (556 / 644)
    expect(lines['G496879-2']).toMatchObject({
      quantity: 1,
      vatable: true,
      unitPrice: { satang: 4500, thb: 45 },
      discount: { satang: 556 },
      total: { satang: 3944 },
      promotion: { promotionId: 'PR2611006', type: 'multi_buy' },
    });
    expect(lines['G310648-2']).toMatchObject({
      discount: { satang: 644 },
      total: { satang: 4556 },
      promotion: { promotionId: 'PR2611006' },
    });
    expect(lines['G310648-2'].vat.satang).toBe(Math.floor((2 * 4556 * 7 + 107) / 214));
    expect(lines['G195396-1']).toMatchObject({
      vatable: false,
      gross: { satang: 59000 },
      discount: { satang: 8850, thb: 88.5 },
      total: { satang: 50150 },
      vat: { satang: 0 },
      promotion: { promotionId: 'PR2611017', type: 'percent_off' },
    });
    expect(lines['G544071-3']).toMatchObject({
      quantity: 2,
      gross: { satang: 29800 },
      discount: { satang: 2000 },
      total: { satang: 27800 },
      promotion: { promotionId: 'PR2611024', type: 'fixed_price' },
    });
    expect(lines['G544071-3'].name).toMatch(/Eggs/);
    expect(
      b.promotions.map((p: { promotionId: string; discount: { satang: number } }) => [
        p.promotionId,
        p.discount.satang,
      ]),
    ).toEqual([
      ['PR2611006', 1200],
      ['PR2611017', 8850],
      ['PR2611024', 2000],
    ]);
    expect(b.charges).toEqual([
      { code: 'delivery', description: 'Standard delivery', vatable: true, amount: { satang: 4000, thb: 40 } },
      { code: 'payment_fee', description: 'Payment fee (card)', vatable: true, amount: { satang: 0, thb: 0 } },
    ]);
    const vatable = 3944 + 4556 + 4000;
    expect(b.totals).toEqual({
      itemsGross: { satang: 98500, thb: 985 },
      discount: { satang: 12050, thb: 120.5 },
      items: { satang: 86450, thb: 864.5 },
      charges: { satang: 4000, thb: 40 },
      total: { satang: 90450, thb: 904.5 },
      vatable: { satang: vatable, thb: vatable / 100 },
      vat: { satang: 818, thb: 8.18 }, // 12,500 * 7/107 = 817.76
      exempt: { satang: 90450 - vatable, thb: (90450 - vatable) / 100 },
    });
  });

  it('uses no promotion outside its dates', async () => {
    const later = createApp({
      config: stack.config,
      db: stack.db,
      temporal: { client: stack.client, taskQueue: stack.taskQueue },
      logger: testLogger,
      clock: () => Date.parse('2027-03-01T00:00:00Z'),
    });
    const branchId = await branchStocking(
      BASKET.map((b) => b.productId),
      2,
    );
    const res = await cost({ items: BASKET, branchId, deliveryOption: 'pickup', paymentMethod: 'qr' }, later);
    expect(res.status).toBe(200);
    expect(res.body.body.totals.discount.satang).toBe(0);
    expect(res.body.body.promotions).toEqual([]);
    expect(res.body.body.totals.total.satang).toBe(98500);
  });

  it('404 NOT_FOUND for unknown products, naming them', async () => {
    const res = await cost({
      items: [
        { productId: 'G496879-2', quantity: 1 },
        { productId: 'G000000-9', quantity: 1 },
      ],
      branchId: 'B001',
      deliveryOption: 'pickup',
      paymentMethod: 'qr',
    });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(paymentError('NOT_FOUND', { field: 'items.1.productId', productIds: ['G000000-9'] }));
    expect(res.body.statusCode).toBe(404);
  });

  it('404 NOT_FOUND for an unknown branch', async () => {
    const res = await cost({
      items: [{ productId: 'G496879-2', quantity: 1 }],
      branchId: 'B999',
      deliveryOption: 'pickup',
      paymentMethod: 'qr',
    });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(paymentError('NOT_FOUND', { field: 'branchId' }));
  });

  it('400 INVALID_INPUT out_of_stock with the available quantity', async () => {
    const none = await stack.db('inventory').where({ quantity: 0 }).orderBy(['branch_id', 'product_id']).first();
    const some = await stack
      .db('inventory')
      .where({ branch_id: none.branch_id })
      .andWhere('quantity', '>', 0)
      .orderBy('product_id')
      .first();
    const res = await cost({
      items: [
        { productId: some.product_id, quantity: some.quantity + 1 },
        { productId: none.product_id, quantity: 1 },
      ],
      branchId: none.branch_id,
      deliveryOption: 'express',
      paymentMethod: 'qr',
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(
      paymentError('INVALID_INPUT', {
        field: 'items.0.quantity',
        reason: 'out_of_stock',
        branchId: none.branch_id,
        items: [
          { productId: some.product_id, requested: some.quantity + 1, available: some.quantity },
          { productId: none.product_id, requested: 1, available: 0 },
        ],
      }),
    );
  });

  it.each([
    [{ items: undefined }, 'MISSING_FIELD', 'items'],
    [{ branchId: undefined }, 'MISSING_FIELD', 'branchId'],
    [{ deliveryOption: undefined }, 'MISSING_FIELD', 'deliveryOption'],
    [{ paymentMethod: undefined }, 'MISSING_FIELD', 'paymentMethod'],
    [{ items: [] }, 'INVALID_INPUT', 'items'],
    [{ items: [{ productId: 'G496879-2', quantity: 0 }] }, 'INVALID_INPUT', 'items.0.quantity'],
    [{ items: [{ productId: 'G496879-2', quantity: 1.5 }] }, 'INVALID_INPUT', 'items.0.quantity'],
    [
      {
        items: [
          { productId: 'G496879-2', quantity: 1 },
          { productId: 'G496879-2', quantity: 2 },
        ],
      },
      'INVALID_INPUT',
      'items.1.productId',
    ],
    [{ deliveryOption: 'drone' }, 'INVALID_INPUT', 'deliveryOption'],
    [{ paymentMethod: 'cash' }, 'INVALID_INPUT', 'paymentMethod'],
    [{ coupon: 'X' }, 'INVALID_INPUT', 'coupon'],
  ])('rejects %p with %s naming %s', async (patch, code, field) => {
    const res = await cost({
      items: [{ productId: 'G496879-2', quantity: 1 }],
      branchId: 'B001',
      deliveryOption: 'pickup',
      paymentMethod: 'qr',
      ...patch,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(paymentError(code, { field }));
  });
});
