/**
 * The payment_links and payment_link_visits tables: the only place they are read or written.
 * A visit row is claimed in one transaction with the link row locked, so two visits of a
 * single-use link never start two payments side by side.
 */
import type { Db } from '../db/knex';
import type { Mode } from '../domain/mode';
import { afterCursor, pageOf, type Page } from '../http/pagination';

export interface PaymentLink {
  id: string;
  code: string;
  apiKeyId: string;
  mode: Mode;
  amountSatang: number;
  description: string;
  reusable: boolean;
  expiresAt: Date | null;
  deactivatedAt: Date | null;
  createdAt: Date;
}

export interface LinkVisit {
  linkId: string;
  seq: number;
  orderId: string;
  createdAt: Date;
}

type Row = Record<string, unknown>;
const toLink = (r: Row): PaymentLink => ({
  id: String(r.id),
  code: String(r.code),
  apiKeyId: String(r.api_key_id),
  mode: r.mode as Mode,
  amountSatang: Number(r.amount_satang),
  description: String(r.description),
  reusable: Boolean(r.reusable),
  expiresAt: (r.expires_at as Date | null) ?? null,
  deactivatedAt: (r.deactivated_at as Date | null) ?? null,
  createdAt: r.created_at as Date,
});
const toVisit = (r: Row): LinkVisit => ({
  linkId: String(r.link_id),
  seq: Number(r.seq),
  orderId: String(r.order_id),
  createdAt: r.created_at as Date,
});

export type NewLink = Omit<PaymentLink, 'deactivatedAt' | 'createdAt'>;

export async function insertLink(db: Db, link: NewLink): Promise<PaymentLink> {
  const [row] = await db('payment_links')
    .insert({
      id: link.id,
      code: link.code,
      api_key_id: link.apiKeyId,
      mode: link.mode,
      amount_satang: link.amountSatang,
      description: link.description,
      reusable: link.reusable,
      expires_at: link.expiresAt,
    })
    .returning('*');
  return toLink(row as Row);
}

/** The link of `id` if `owner` owns it (key and mode), else undefined. */
export async function ownLink(db: Db, owner: { id: string; mode: Mode }, id: string) {
  const r = await db('payment_links').where({ id, api_key_id: owner.id, mode: owner.mode }).first();
  return r ? toLink(r as Row) : undefined;
}

export async function linkByCode(db: Db, code: string): Promise<PaymentLink | undefined> {
  const r = await db('payment_links').where({ code }).first();
  return r ? toLink(r as Row) : undefined;
}

export async function listOwnLinks(
  db: Db,
  owner: { id: string; mode: Mode },
  page: { limit: number; startingAfter?: string },
): Promise<Page<PaymentLink>> {
  const q = db('payment_links as l').where({ 'l.api_key_id': owner.id, 'l.mode': owner.mode }).select('l.*');
  return pageOf(
    afterCursor(q, { alias: 'l', table: 'payment_links', cursor: page.startingAfter, order: 'desc' }),
    page.limit,
    (r: Row) => toLink(r),
  );
}

/** Deactivates the owner's link (the first time is kept); undefined when it is not the owner's. */
export async function deactivateLink(db: Db, owner: { id: string; mode: Mode }, id: string) {
  await db('payment_links')
    .where({ id, api_key_id: owner.id, mode: owner.mode })
    .whereNull('deactivated_at')
    .update({ deactivated_at: db.fn.now() });
  return ownLink(db, owner, id);
}

/** The visits of these links, oldest first. */
export async function visitsOf(db: Db, linkIds: string[]): Promise<LinkVisit[]> {
  if (linkIds.length === 0) return [];
  const rows = await db('payment_link_visits').whereIn('link_id', linkIds).orderBy(['link_id', 'seq']);
  return (rows as Row[]).map(toVisit);
}

/**
 * One visit's claim, with the link row locked: `decide` sees the link (as locked) and its last
 * visit and returns either an order id to reuse, 'new' (a visit row with the next seq is
 * written) or a refusal, which is returned as is.
 */
export async function claimVisit<R extends { refused: string }>(
  db: Db,
  code: string,
  decide: (link: PaymentLink, last: LinkVisit | undefined) => Promise<R | { reuse: string } | 'new'>,
): Promise<R | { link: PaymentLink; orderId: string } | undefined> {
  return db.transaction(async (trx) => {
    const r = await trx('payment_links').where({ code }).forUpdate().first();
    if (!r) return undefined;
    const link = toLink(r as Row);
    const lastRow = await trx('payment_link_visits').where({ link_id: link.id }).orderBy('seq', 'desc').first();
    const last = lastRow ? toVisit(lastRow as Row) : undefined;
    const d = await decide(link, last);
    if (d !== 'new') return 'reuse' in d ? { link, orderId: d.reuse } : d;
    const seq = (last?.seq ?? 0) + 1;
    const orderId = `${link.id}-${seq}`;
    await trx('payment_link_visits').insert({ link_id: link.id, seq, order_id: orderId });
    return { link, orderId };
  });
}
