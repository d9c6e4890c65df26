/**
 * The partner bank simulator for sandbox mode: the bank HTTP API that activities/bank.ts calls
 * (see its header), served on loopback by the worker process, with its records in Postgres
 * (sim_bank_users, sim_bank_orders) so they survive restarts.
 *
 * Behaviour: creating a user or an order again with the same fields returns the existing one
 * (200); with other fields it is 409. An order needs an existing user (404 otherwise).
 * Refunds of PromptPay/bank payments: POST /v1/refunds {paymentId, orderId, amountSatang,
 * currency} with an Idempotency-Key -> 201 {refundId, status: succeeded}; an amount ending in
 * .99 THB is declined (402 refund_declined), as in the card provider simulator.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import type { Db } from '../db/knex';
import { newId } from '../ids';
import { isDeclinedRefund, simulatedRefundId } from './card-provider';
import { serveOnLoopback, simulatorApp } from './http';

const UserIn = z.object({
  userId: z.string().min(1).max(64),
  name: z.string().min(1).max(200),
  email: z.string().email().max(200).optional(),
  phone: z.string().max(30).optional(),
});
const OrderIn = z.object({
  orderId: z.string().min(1).max(64),
  userId: z.string().min(1).max(64),
  amountSatang: z.number().int().positive(),
  currency: z.literal('THB'),
  description: z.string().max(500).optional(),
});

const RefundIn = z.object({
  paymentId: z.string().min(1).max(64),
  orderId: z.string().min(1).max(64),
  amountSatang: z.number().int().positive(),
  currency: z.literal('THB'),
  reason: z.string().max(500).optional(),
});

interface UserRow {
  user_id: string;
  bank_user_id: string;
  name: string;
  email: string | null;
  phone: string | null;
  created_at: Date;
}
interface OrderRow {
  order_id: string;
  bank_order_id: string;
  user_id: string;
  amount_satang: string;
  currency: string;
  description: string | null;
  status: string;
  created_at: Date;
}

const userOut = (u: UserRow) => ({
  userId: u.user_id,
  bankUserId: u.bank_user_id,
  name: u.name,
  email: u.email,
  phone: u.phone,
  status: 'active',
  createdAt: u.created_at.toISOString(),
});
const orderOut = (o: OrderRow) => ({
  orderId: o.order_id,
  bankOrderId: o.bank_order_id,
  userId: o.user_id,
  amountSatang: Number(o.amount_satang),
  currency: o.currency,
  description: o.description,
  status: o.status,
  createdAt: o.created_at.toISOString(),
});

function invalid(ctx: Koa.Context, error: z.ZodError) {
  const issue = error.issues[0];
  ctx.status = 400;
  ctx.body = {
    code: 'invalid_request',
    message: `${issue.path.join('.')}: ${issue.message}`,
    field: issue.path.join('.'),
  };
}

export function createBankSimulator({ db }: { db: Db }): Koa {
  const r = new Router({ prefix: '/v1' });

  r.post('/users', async (ctx) => {
    const parsed = UserIn.safeParse(ctx.request.body);
    if (!parsed.success) return invalid(ctx, parsed.error);
    const u = parsed.data;
    const inserted = await db('sim_bank_users')
      .insert({
        user_id: u.userId,
        bank_user_id: newId('usr'),
        name: u.name,
        email: u.email ?? null,
        phone: u.phone ?? null,
      })
      .onConflict('user_id')
      .ignore()
      .returning<UserRow[]>('*');
    if (inserted.length) {
      ctx.status = 201;
      ctx.body = userOut(inserted[0]);
      return;
    }
    const existing = await db('sim_bank_users').where({ user_id: u.userId }).first<UserRow>();
    if (existing.name !== u.name || existing.email !== (u.email ?? null) || existing.phone !== (u.phone ?? null)) {
      ctx.status = 409;
      ctx.body = { code: 'user_exists', message: `user ${u.userId} exists with other details` };
      return;
    }
    ctx.body = userOut(existing);
  });

  r.get('/users/:userId', async (ctx) => {
    const user = await db('sim_bank_users').where({ user_id: ctx.params.userId }).first<UserRow | undefined>();
    if (!user) {
      ctx.status = 404;
      ctx.body = { code: 'user_not_found', message: `no user ${ctx.params.userId}` };
      return;
    }
    const orders = await db('sim_bank_orders')
      .where({ user_id: user.user_id })
      .orderBy('created_at')
      .select<OrderRow[]>('*');
    ctx.body = { ...userOut(user), orders: orders.map(orderOut) };
  });

  r.post('/orders', async (ctx) => {
    const parsed = OrderIn.safeParse(ctx.request.body);
    if (!parsed.success) return invalid(ctx, parsed.error);
    const o = parsed.data;
    const user = await db('sim_bank_users').where({ user_id: o.userId }).first('user_id');
    if (!user) {
      ctx.status = 404;
      ctx.body = { code: 'user_not_found', message: `no user ${o.userId}` };
      return;
    }
    const inserted = await db('sim_bank_orders')
      .insert({
        order_id: o.orderId,
        bank_order_id: newId('ord'),
        user_id: o.userId,
        amount_satang: o.amountSatang,
        currency: o.currency,
        description: o.description ?? null,
        status: 'created',
      })
      .onConflict('order_id')
      .ignore()
      .returning<OrderRow[]>('*');
    if (inserted.length) {
      ctx.status = 201;
      ctx.body = orderOut(inserted[0]);
      return;
    }
    const existing = await db('sim_bank_orders').where({ order_id: o.orderId }).first<OrderRow>();
    if (
      existing.user_id !== o.userId ||
      Number(existing.amount_satang) !== o.amountSatang ||
      existing.description !== (o.description ?? null)
    ) {
      ctx.status = 409;
      ctx.body = { code: 'order_exists', message: `order ${o.orderId} exists with other details` };
      return;
    }
    ctx.body = orderOut(existing);
  });

  r.post('/refunds', async (ctx) => {
    const parsed = RefundIn.safeParse(ctx.request.body);
    if (!parsed.success) {
      ctx.status = 400;
      ctx.body = { code: 'invalid_request', message: parsed.error.issues[0].message };
      return;
    }
    if (isDeclinedRefund(parsed.data.amountSatang)) {
      ctx.status = 402;
      ctx.body = { code: 'refund_declined', message: 'the refund was declined' };
      return;
    }
    ctx.status = 201;
    ctx.body = {
      refundId: simulatedRefundId(ctx.get('Idempotency-Key') || newId('req')),
      paymentId: parsed.data.paymentId,
      amountSatang: parsed.data.amountSatang,
      status: 'succeeded',
    };
  });

  return simulatorApp(r, (code, message) => ({ code, message }));
}

export const startBankSimulator = (opts: { db: Db; port?: number }) =>
  serveOnLoopback(createBankSimulator(opts), opts.port);
