/** Reading the payments a callback refers to (the payments table is the workflows' projection). */
import type { Db } from '../db/knex';
import type { PaymentStatus } from '../domain/payment-state';

export interface PaymentRef {
  id: string;
  orderId: string;
  userId: string;
  status: PaymentStatus;
  method: string;
  mode: 'live' | 'sandbox';
  amountSatang: number;
  callbackUrl: string | null;
  providerRef: string | null;
  workflowId: string;
  apiKeyId: string | null;
}

const COLUMNS = ['id', 'order_id', 'user_id', 'status', 'method', 'mode', 'amount_satang', 'callback_url', 'provider_ref', 'workflow_id', 'api_key_id'];

type Row = Record<string, unknown>;
const toRef = (r: Row | undefined): PaymentRef | undefined =>
  r && {
    id: String(r.id),
    orderId: String(r.order_id),
    userId: String(r.user_id),
    status: r.status as PaymentStatus,
    method: String(r.method),
    mode: r.mode as 'live' | 'sandbox',
    amountSatang: Number(r.amount_satang),
    callbackUrl: (r.callback_url as string | null) ?? null,
    providerRef: (r.provider_ref as string | null) ?? null,
    workflowId: String(r.workflow_id),
    apiKeyId: (r.api_key_id as string | null) ?? null,
  };

export const paymentByOrderId = async (db: Db, orderId: string): Promise<PaymentRef | undefined> =>
  toRef(await db('payments').select(COLUMNS).where({ order_id: orderId }).first());

export const paymentByProviderRef = async (db: Db, ref: string): Promise<PaymentRef | undefined> =>
  toRef(await db('payments').select(COLUMNS).where({ provider_ref: ref }).orderBy('created_at', 'desc').first());

export const paymentById = async (db: Db, id: string): Promise<PaymentRef | undefined> => toRef(await db('payments').select(COLUMNS).where({ id }).first());

/** A provider may name the payment by our id or by the reference we gave it (charge id, QR reference). */
export const paymentMatches = (p: PaymentRef, given: string): boolean => given === p.id || (p.providerRef !== null && given === p.providerRef);
