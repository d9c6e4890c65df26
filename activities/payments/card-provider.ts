/**
 * The card provider's charge API (CARD_PROVIDER_URL in live mode, the built-in simulator on
 * loopback in sandbox mode). Contract of the provider API we call (README documents it):
 *   POST /charges {amount (satang), currency, card (token), return_uri?, description, metadata}
 *     with Idempotency-Key = our payment id -> 200 {id, status: pending|successful|failed, authorize_uri}
 *   4xx {code, message}: the charge was refused (declined card, bad token) -> non-retryable
 *   CardRejected; network errors, timeouts and 5xx are retried by Temporal.
 *   POST /charges {amount, currency, source_charge, capture: false}: a new authorisation on the
 *   card on file of an earlier charge (no card data sent; decided at once: successful or 4xx).
 */
import type { Config } from '../../src/config';
import type { Mode } from '../../src/domain/mode';
import { ActivityFailureType } from '../../src/domain/temporal';
import { expectSuccess, httpJson, type HttpReply } from '../provider-http';
import { providerEndpoint, type SandboxProviders } from '../provider-endpoint';

export interface CreateChargeInput {
  paymentId: string;
  orderId: string;
  amountSatang: number;
  token: string;
  mode: Mode;
  returnUri?: string;
  /** false: authorise only (the orders slice captures later) */
  capture?: boolean;
}

/** A capture (part or all) or a void of an authorisation, once per idempotency key. */
import type { HoldOperationInput } from '../../src/payments';
export type { HoldOperationInput };

export interface Charge {
  id: string;
  status: string;
  authorizeUri: string | null;
}

export function createCardProviderActivities({ config, sandbox }: { config: Config; sandbox: SandboxProviders }) {
  const baseUrl = providerEndpoint({
    label: 'card provider',
    simulatorsOn: config.simulators,
    startSimulator: sandbox.cardProvider,
    liveUrl: config.payments.cardProviderUrl,
    liveUrlVar: 'CARD_PROVIDER_URL',
  });

  /** POST /charges once per idempotency key: the charge, or CardRejected on a 4xx. */
  async function postCharge(mode: Mode, idempotencyKey: string, body: Record<string, unknown>): Promise<Charge> {
    const base = await baseUrl(mode);
    const headers: Record<string, string> = { 'idempotency-key': idempotencyKey };
    if (mode === 'live' && config.payments.cardProviderKey)
      headers.authorization = `Bearer ${config.payments.cardProviderKey}`;
    let reply: HttpReply;
    try {
      reply = await httpJson(`${base}/charges`, {
        method: 'POST',
        headers,
        timeoutMs: config.payments.providerTimeoutMs,
        body,
      });
    } catch (e) {
      throw new Error(`card provider unreachable: ${(e as Error).message}`);
    }
    const got = expectSuccess(reply, ActivityFailureType.CardRejected, 'card provider').body as {
      id?: unknown;
      status?: unknown;
      authorize_uri?: unknown;
    };
    if (typeof got?.id !== 'string' || !got.id) throw new Error('card provider answered without a charge id');
    return {
      id: got.id,
      status: typeof got.status === 'string' ? got.status : 'pending',
      authorizeUri: typeof got.authorize_uri === 'string' ? got.authorize_uri : null,
    };
  }

  return {
    async createCardCharge(input: CreateChargeInput): Promise<Charge> {
      return postCharge(input.mode, input.paymentId, {
        amount: input.amountSatang,
        currency: 'THB',
        card: input.token,
        return_uri: input.returnUri,
        description: `Order ${input.orderId}`,
        metadata: { orderId: input.orderId, paymentId: input.paymentId },
        ...(input.capture === false ? { capture: false } : {}),
      });
    },

    /** A new authorisation (capture=false) on the card on file of `sourceChargeId`, once per idempotency key. */
    async chargeCardOnFile(input: {
      sourceChargeId: string;
      orderId: string;
      amountSatang: number;
      mode: Mode;
      idempotencyKey: string;
    }): Promise<Charge> {
      return postCharge(input.mode, input.idempotencyKey, {
        amount: input.amountSatang,
        currency: 'THB',
        source_charge: input.sourceChargeId,
        capture: false,
        description: `Order ${input.orderId}: the difference above the authorisation`,
        metadata: { orderId: input.orderId },
      });
    },

    /** POST /charges/{id}/capture {amount}, or POST /charges/{id}/reverse (void): 4xx is CardRejected. */
    async holdOperation(
      kind: 'capture' | 'void',
      input: HoldOperationInput,
    ): Promise<{ id: string; amountSatang: number }> {
      const base = await baseUrl(input.mode);
      const headers: Record<string, string> = { 'idempotency-key': input.idempotencyKey };
      if (input.mode === 'live' && config.payments.cardProviderKey)
        headers.authorization = `Bearer ${config.payments.cardProviderKey}`;
      const path = kind === 'capture' ? 'capture' : 'reverse';
      let reply: HttpReply;
      try {
        reply = await httpJson(`${base}/charges/${encodeURIComponent(input.chargeId)}/${path}`, {
          method: 'POST',
          headers,
          timeoutMs: config.payments.providerTimeoutMs,
          body: kind === 'capture' ? { amount: input.amountSatang } : {},
        });
      } catch (e) {
        throw new Error(`card provider unreachable: ${(e as Error).message}`);
      }
      const body = expectSuccess(reply, ActivityFailureType.CardRejected, 'card provider').body as {
        id?: unknown;
        amount?: unknown;
      };
      if (typeof body?.id !== 'string') throw new Error(`card provider answered a ${kind} without an id`);
      return { id: body.id, amountSatang: typeof body.amount === 'number' ? body.amount : 0 };
    },
  };
}
