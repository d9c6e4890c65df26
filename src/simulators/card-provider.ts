/**
 * The sandbox card provider: the charge API activities/payments/card-provider.ts calls, on loopback
 * in the worker, charges in Postgres (sim_card_charges). Tokens: `declined` -> 402, `invalid` or
 * not `tok...` -> 400, else a pending charge decided by a signed callback; one Idempotency-Key,
 * one charge. Refunds (POST /charges/{id}/refunds; .99 THB declined), captures of part or all of
 * an authorisation once per Idempotency-Key (sim_card_captures; .98 THB declined), voids (POST
 * /charges/{id}/reverse; .97 THB declined), and charges on the card on file of an earlier charge
 * (source_charge, capture=false; .96 THB declined); docs/orders.md "Sandbox" has the order rules.
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
  card: z.string().min(1).max(256).optional(),
  /** the card on file: the card of this earlier charge (a merchant-initiated charge) */
  source_charge: z.string().min(1).max(64).optional(),
  return_uri: z.string().url().optional(),
  description: z.string().max(500).optional(),
  metadata: z.record(z.unknown()).optional(),
  capture: z.boolean().optional(),
});

const CaptureIn = z.object({ amount: z.number().int().positive() });

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
  capture: boolean;
  captured_satang: string;
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
  capture: c.capture,
  captured_amount: Number(c.captured_satang),
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
    if (c.source_charge !== undefined && c.card === undefined) return chargeOnFile(ctx, c, c.source_charge);
    if (c.card === undefined) {
      ctx.status = 400;
      ctx.body = { object: 'error', code: 'invalid_request', message: 'card or source_charge is required' };
      return;
    }
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
    ctx.body = chargeOut(
      await insertCharge(ctx, c, {
        token: c.card.slice(0, 12),
        status: 'pending',
        return_uri: c.return_uri ?? null,
        metadata: c.metadata ?? {},
      }),
    );
  });

  /** The charge of this request's Idempotency-Key: inserted, or the one a retry inserted before. */
  async function insertCharge(
    ctx: Koa.Context,
    c: z.infer<typeof ChargeIn>,
    own: { token: string; status: string; return_uri: string | null; metadata: object },
  ): Promise<ChargeRow> {
    const idem = ctx.get('Idempotency-Key') || null;
    const inserted = await db('sim_card_charges')
      .insert({
        id: `chrg_test_${randomBytes(12).toString('hex')}`,
        idempotency_key: idem,
        amount_satang: c.amount,
        currency: c.currency.toUpperCase(),
        ...own,
        metadata: JSON.stringify(own.metadata),
        capture: c.capture ?? true,
      })
      .onConflict('idempotency_key')
      .ignore()
      .returning<ChargeRow[]>('*');
    return inserted[0] ?? (await db('sim_card_charges').where({ idempotency_key: idem }).first<ChargeRow>());
  }

  /** A charge on the card of `source`: decided at once (no 3-D Secure for a merchant-initiated charge). */
  async function chargeOnFile(ctx: Koa.Context, c: z.infer<typeof ChargeIn>, source: string) {
    const src = await db('sim_card_charges').where({ id: source }).first<(ChargeRow & { token: string }) | undefined>();
    if (!src) {
      ctx.status = 404;
      ctx.body = { object: 'error', code: 'not_found', message: `no charge ${source}` };
      return;
    }
    if (c.amount % 100 === 96) {
      ctx.status = 402;
      ctx.body = { object: 'error', code: 'card_declined', message: 'the card on file was declined' };
      return;
    }
    ctx.body = chargeOut(
      await insertCharge(ctx, c, {
        token: src.token,
        status: 'successful',
        return_uri: null,
        metadata: { ...(c.metadata ?? {}), sourceCharge: source },
      }),
    );
  }

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

  /** One capture or void per Idempotency-Key: the first's answer for every retry. */
  async function holdOperation(ctx: Koa.Context, kind: 'capture' | 'void', amountOf: (c: ChargeRow) => number) {
    const idem = ctx.get('Idempotency-Key');
    if (!idem) {
      ctx.status = 400;
      ctx.body = { object: 'error', code: 'invalid_request', message: 'Idempotency-Key is required' };
      return;
    }
    const prior = await db('sim_card_captures').where({ idempotency_key: idem }).first();
    const answer = (op: { id: string; charge_id: string; amount_satang: string; kind: string }) => ({
      object: kind,
      id: op.id,
      charge: op.charge_id,
      amount: Number(op.amount_satang),
      status: 'successful',
    });
    if (prior) return void (ctx.body = answer(prior));
    await db.transaction(async (trx) => {
      const c = await trx('sim_card_charges').where({ id: ctx.params.id }).forUpdate().first<ChargeRow | undefined>();
      const refuse = (status: number, code: string, message: string) => {
        ctx.status = status;
        ctx.body = { object: 'error', code, message };
      };
      if (!c) return refuse(404, 'not_found', `no charge ${ctx.params.id}`);
      const same = await trx('sim_card_captures').where({ idempotency_key: idem }).first();
      if (same) return void (ctx.body = answer(same));
      if (c.capture) return refuse(400, 'failed_capture', 'the charge was not an authorisation');
      const held = Number(c.amount_satang) - Number(c.captured_satang);
      const done = await trx('sim_card_captures').where({ charge_id: c.id }).first();
      if (done) return refuse(400, 'failed_capture', `the authorisation was already ${done.kind}d`);
      const amount = amountOf(c);
      if (kind === 'capture' && (amount > held || amount <= 0))
        return refuse(400, 'failed_capture', `at most ${held} satang can be captured`);
      if (kind === 'capture' && amount % 100 === 98) return refuse(402, 'capture_declined', 'the capture was declined');
      if (kind === 'void' && Number(c.amount_satang) % 100 === 97)
        return refuse(402, 'void_declined', 'the void was declined');
      const [op] = await trx('sim_card_captures')
        .insert({
          id: `${kind === 'capture' ? 'capt' : 'void'}_test_${randomBytes(10).toString('hex')}`,
          charge_id: c.id,
          idempotency_key: idem,
          kind,
          amount_satang: amount,
        })
        .returning('*');
      if (kind === 'capture')
        await trx('sim_card_charges').where({ id: c.id }).update({ captured_satang: amount, status: 'successful' });
      else await trx('sim_card_charges').where({ id: c.id }).update({ status: 'reversed' });
      ctx.body = answer(op);
    });
  }

  r.post('/charges/:id/capture', async (ctx) => {
    const parsed = CaptureIn.safeParse(ctx.request.body);
    if (!parsed.success) {
      ctx.status = 400;
      ctx.body = { object: 'error', code: 'invalid_request', message: parsed.error.issues[0].message };
      return;
    }
    await holdOperation(ctx, 'capture', () => parsed.data.amount);
  });

  r.post('/charges/:id/reverse', async (ctx) => {
    await holdOperation(ctx, 'void', (c) => Number(c.amount_satang));
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
