/**
 * The sandbox card provider: the charge API activities/payments/card-provider.ts calls, on loopback in the
 * worker process, charges kept in Postgres (sim_card_charges). Tokens: containing `declined` ->
 * 402 card_declined; containing `invalid` or not starting with `tok` -> 400 invalid_card; else a
 * pending charge, whose result comes as a signed callback. The same Idempotency-Key returns the
 * same charge. Refunds: POST /charges/{id}/refunds {amount} with an Idempotency-Key (a retry gets
 * the same refund); an amount ending in .99 THB is declined (402 refund_declined); an unknown
 * charge is 404.
 */
import Router from '@koa/router';
import type Koa from 'koa';
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Db } from '../db/knex';
import { serveOnLoopback, simulatorApp } from './http';

const ChargeIn = z.object({
  amount: z.number().int().positive(),
  currency: z.string().regex(/^[A-Za-z]{3}$/),
  card: z.string().min(1).max(256),
  return_uri: z.string().url().optional(),
  description: z.string().max(500).optional(),
  metadata: z.record(z.unknown()).optional(),
});

const RefundIn = z.object({ amount: z.number().int().positive(), reason: z.string().max(500).optional() });

/** Sandbox rule of both simulators: a refund amount ending in .99 THB is declined. */
export const isDeclinedRefund = (amountSatang: number): boolean => amountSatang % 100 === 99;
/** A refund id that follows from the Idempotency-Key: a retried refund is the same refund. */
export const simulatedRefundId = (idempotencyKey: string): string =>
  `rfnd_test_${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 24)}`;

interface ChargeRow {
  id: string;
  amount_satang: string;
  currency: string;
  status: string;
  return_uri: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
}

const chargeOut = (c: ChargeRow) => ({
  object: 'charge',
  id: c.id,
  status: c.status,
  amount: Number(c.amount_satang),
  currency: c.currency,
  authorize_uri: null,
  return_uri: c.return_uri,
  metadata: c.metadata,
  created_at: c.created_at.toISOString(),
});

export function createCardProviderSimulator({ db }: { db: Db }): Koa {
  const r = new Router();

  r.post('/charges', async (ctx) => {
    const parsed = ChargeIn.safeParse(ctx.request.body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      ctx.status = 400;
      ctx.body = { object: 'error', code: 'invalid_request', message: `${issue.path.join('.')}: ${issue.message}` };
      return;
    }
    const c = parsed.data;
    if (/declined/i.test(c.card)) {
      ctx.status = 402;
      ctx.body = { object: 'error', code: 'card_declined', message: 'the card was declined' };
      return;
    }
    if (/invalid/i.test(c.card) || !/^tok/.test(c.card)) {
      ctx.status = 400;
      ctx.body = { object: 'error', code: 'invalid_card', message: 'the card token is not valid' };
      return;
    }
    const idem = ctx.get('Idempotency-Key') || null;
    const inserted = await db('sim_card_charges')
      .insert({
        id: `chrg_test_${randomBytes(12).toString('hex')}`,
        idempotency_key: idem,
        amount_satang: c.amount,
        currency: c.currency.toUpperCase(),
        token: c.card.slice(0, 12),
        status: 'pending',
        return_uri: c.return_uri ?? null,
        metadata: JSON.stringify(c.metadata ?? {}),
      })
      .onConflict('idempotency_key')
      .ignore()
      .returning<ChargeRow[]>('*');
    ctx.body = chargeOut(
      inserted[0] ?? (await db('sim_card_charges').where({ idempotency_key: idem }).first<ChargeRow>()),
    );
  });

  r.post('/charges/:id/refunds', async (ctx) => {
    const parsed = RefundIn.safeParse(ctx.request.body);
    if (!parsed.success) {
      ctx.status = 400;
      ctx.body = { object: 'error', code: 'invalid_request', message: parsed.error.issues[0].message };
      return;
    }
    const c = await db('sim_card_charges').where({ id: ctx.params.id }).first<ChargeRow | undefined>();
    if (!c) {
      ctx.status = 404;
      ctx.body = { object: 'error', code: 'not_found', message: `no charge ${ctx.params.id}` };
      return;
    }
    if (isDeclinedRefund(parsed.data.amount)) {
      ctx.status = 402;
      ctx.body = { object: 'error', code: 'refund_declined', message: 'the refund was declined' };
      return;
    }
    ctx.body = {
      object: 'refund',
      id: simulatedRefundId(ctx.get('Idempotency-Key') || randomBytes(12).toString('hex')),
      charge: c.id,
      amount: parsed.data.amount,
      status: 'succeeded',
    };
  });

  r.get('/charges/:id', async (ctx) => {
    const c = await db('sim_card_charges').where({ id: ctx.params.id }).first<ChargeRow | undefined>();
    if (!c) {
      ctx.status = 404;
      ctx.body = { object: 'error', code: 'not_found', message: `no charge ${ctx.params.id}` };
      return;
    }
    ctx.body = chargeOut(c);
  });

  return simulatorApp(r, (code, message) => ({ object: 'error', code, message }));
}

export const startCardProviderSimulator = (opts: { db: Db; port?: number }) =>
  serveOnLoopback(createCardProviderSimulator(opts), opts.port);
