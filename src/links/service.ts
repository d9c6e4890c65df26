/**
 * Payment links: create, list with their payments, deactivate (owner checks: the key and mode),
 * and a visit, which claims a visit row and then creates the QR payment through the payment
 * service (dependencies passed in: this slice writes no SQL on another slice's table).
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { ApiKeyInfo } from '../domain/api-keys';
import { AppError, ErrorCode } from '../domain/errors';
import { satangToThb } from '../domain/money';
import type { PaymentStatus } from '../payments';
import {
  claimVisit,
  deactivateLink,
  insertLink,
  linkByCode,
  listOwnLinks,
  ownLink,
  visitsOf,
  type LinkVisit,
  type PaymentLink,
} from './repository';
import type { PaymentLinkIn, PaymentLinkList, PaymentLinkOut } from './schemas';

/** What a visit's page shows instead of a payment. */
export type VisitRefusal = { refused: 'paid' | 'expired' | 'deactivated' | 'owner' };
export type LinkState = PaymentLinkOut['status'];

/** A payment as the links need it (from the payments slice). */
export interface LinkPaymentView {
  id: string;
  status: PaymentStatus;
  amountSatang: number;
  expiresAt: Date | null;
}

export interface LinkServiceDeps {
  db: Db;
  config: Config;
  clock: () => number;
  /** the payment service's createQrPayment */
  createQrPayment: (
    req: { orderId: string; userId: string; customerId: string; amount: number },
    key: ApiKeyInfo,
  ) => Promise<{ checkoutUrl: string }>;
  /** the payments of these order ids that `owner` (a link's key, in its mode) made (payments repository) */
  paymentsByOrderIds: (
    orderIds: string[],
    owner: { apiKeyId: string; mode: PaymentLink['mode'] },
  ) => Promise<Map<string, LinkPaymentView>>;
  /** a key by id, undefined when revoked (api-key repository) */
  keyById: (id: string) => Promise<ApiKeyInfo | undefined>;
}

/** Statuses that mean the payer paid (a single-use link is done). */
const PAID = new Set(['paid', 'refunded']);
const newLinkId = () => `plink_${randomBytes(12).toString('hex')}`;
/** 128 random bits, base64url: the link's short code (unguessable, not derived from anything). */
const newCode = () => randomBytes(16).toString('base64url');
/** a link's payments are those its key made in its mode (another key may use the same order id) */
const ownerOf = (link: PaymentLink) => ({ apiKeyId: link.apiKeyId, mode: link.mode });
export const CODE_PATTERN = /^[A-Za-z0-9_-]{22}$/;

export function createLinkService(deps: LinkServiceDeps) {
  const { db, config, clock } = deps;
  const urlOf = (code: string) => `${config.publicBaseUrl.replace(/\/+$/, '')}/l/${code}`;

  const stateOf = (link: PaymentLink, paid: boolean): LinkState =>
    link.deactivatedAt
      ? 'deactivated'
      : !link.reusable && paid
        ? 'paid'
        : link.expiresAt && link.expiresAt.getTime() <= clock()
          ? 'expired'
          : 'active';

  async function present(links: PaymentLink[]): Promise<PaymentLinkOut[]> {
    const visits = await visitsOf(
      db,
      links.map((l) => l.id),
    );
    const payments = new Map<string, LinkPaymentView>();
    for (const owner of new Set(links.map((l) => `${l.apiKeyId}\n${l.mode}`))) {
      const [apiKeyId, mode] = owner.split('\n') as [string, PaymentLink['mode']];
      const ofOwner = links.filter((l) => l.apiKeyId === apiKeyId && l.mode === mode).map((l) => l.id);
      const orderIds = visits.filter((v) => ofOwner.includes(v.linkId)).map((v) => v.orderId);
      for (const [id, p] of await deps.paymentsByOrderIds(orderIds, { apiKeyId, mode })) payments.set(id, p);
    }
    const byLink = new Map<string, LinkVisit[]>();
    for (const v of visits) byLink.set(v.linkId, [...(byLink.get(v.linkId) ?? []), v]);
    return links.map((l) => {
      const own = (byLink.get(l.id) ?? []).map((v) => {
        const p = payments.get(v.orderId);
        return {
          orderId: v.orderId,
          paymentId: p?.id ?? null,
          status: p?.status ?? 'starting',
          amount: satangToThb(p?.amountSatang ?? l.amountSatang),
          createdAt: v.createdAt.toISOString(),
        };
      });
      return {
        id: l.id,
        url: urlOf(l.code),
        amount: satangToThb(l.amountSatang),
        currency: 'THB' as const,
        description: l.description,
        reusable: l.reusable,
        mode: l.mode,
        status: stateOf(
          l,
          own.some((p) => PAID.has(p.status)),
        ),
        expiresAt: l.expiresAt?.toISOString() ?? null,
        deactivatedAt: l.deactivatedAt?.toISOString() ?? null,
        createdAt: l.createdAt.toISOString(),
        payments: own,
      };
    });
  }

  const notFound = (id: string) => new AppError(ErrorCode.NOT_FOUND, 'No such payment link', { id });

  async function create(input: PaymentLinkIn, key: ApiKeyInfo): Promise<PaymentLinkOut> {
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= clock())
      throw new AppError(ErrorCode.INVALID_INPUT, 'expiresAt must be in the future', { field: 'expiresAt' });
    const link = await insertLink(db, {
      id: newLinkId(),
      code: newCode(),
      apiKeyId: key.id,
      mode: key.mode,
      amountSatang: input.amount,
      description: input.description,
      reusable: input.reusable,
      expiresAt,
    });
    return (await present([link]))[0];
  }

  async function list(q: { limit: number; starting_after?: string }, key: ApiKeyInfo): Promise<PaymentLinkList> {
    const page = await listOwnLinks(db, key, { limit: q.limit, startingAfter: q.starting_after });
    return { links: await present(page.items), hasMore: page.hasMore, nextCursor: page.nextCursor };
  }

  async function get(id: string, key: ApiKeyInfo): Promise<PaymentLinkOut> {
    const link = await ownLink(db, key, id);
    if (!link) throw notFound(id);
    return (await present([link]))[0];
  }

  async function deactivate(id: string, key: ApiKeyInfo): Promise<PaymentLinkOut> {
    const link = await deactivateLink(db, key, id);
    if (!link) throw notFound(id);
    return (await present([link]))[0];
  }

  /** The link a page shows, with its state, or undefined for an unknown code. */
  async function byCode(code: string): Promise<{ link: PaymentLink; state: LinkState } | undefined> {
    if (!CODE_PATTERN.test(code)) return undefined;
    const link = await linkByCode(db, code);
    if (!link) return undefined;
    const visits = await visitsOf(db, [link.id]);
    const payments = await deps.paymentsByOrderIds(
      visits.map((v) => v.orderId),
      ownerOf(link),
    );
    const paid = [...payments.values()].some((p) => PAID.has(p.status));
    return { link, state: stateOf(link, paid) };
  }

  /**
   * A visit: the checkout URL of the payment it made (or, for a single-use link, of its payment
   * still pending), or why there is none. A single-use link makes a new payment only after the
   * last one failed or expired.
   */
  async function visit(code: string): Promise<{ checkoutUrl: string } | VisitRefusal | undefined> {
    if (!CODE_PATTERN.test(code)) return undefined;
    const claimed = await claimVisit<VisitRefusal>(db, code, async (link, last) => {
      const now = clock();
      if (link.deactivatedAt) return { refused: 'deactivated' };
      if (link.expiresAt && link.expiresAt.getTime() <= now) return { refused: 'expired' };
      if (link.reusable || !last) return 'new';
      const visits = await visitsOf(db, [link.id]);
      const payments = await deps.paymentsByOrderIds(
        visits.map((v) => v.orderId),
        ownerOf(link),
      );
      if ([...payments.values()].some((p) => PAID.has(p.status))) return { refused: 'paid' };
      const p = payments.get(last.orderId);
      // the last payment still open (or its creation interrupted): the same order again
      if (!p || (p.status === 'pending' && (p.expiresAt?.getTime() ?? 0) > now)) return { reuse: last.orderId };
      return 'new';
    });
    if (!claimed) return undefined;
    if ('refused' in claimed) return claimed;
    const key = await deps.keyById(claimed.link.apiKeyId);
    if (!key || key.mode !== claimed.link.mode || !key.scopes.includes('payments:write')) return { refused: 'owner' };
    const created = await deps.createQrPayment(
      {
        orderId: claimed.orderId,
        userId: 'payment-link',
        customerId: claimed.link.id,
        amount: claimed.link.amountSatang,
      },
      key,
    );
    return { checkoutUrl: created.checkoutUrl };
  }

  return { create, list, get, deactivate, byCode, visit };
}

export type LinkService = ReturnType<typeof createLinkService>;
