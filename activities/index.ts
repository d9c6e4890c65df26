/** All activities, built by one factory over injected dependencies. */
import type { Db } from '../src/db/knex';
import type { Config } from '../src/config';
import type { Logger } from '../src/logger';
import type { Resolver } from '../src/resolver';
import type { SandboxProviders } from './provider-endpoint';
import { createPendingPayment, paymentById, paymentRecords, settleAuthorization } from '../src/payments/repository';
import { createBankActivities } from './bank';
import { createCardProviderActivities } from './payments/card-provider';
import { createCallbackActivities } from './callbacks';
import { createNotificationActivities } from './notifications';
import { createLateResultActivities } from './payments/late-results';
import { createPaymentActivities } from './payments';
import { createRefundActivities } from './refunds';
import { createReconciliationActivities } from './reconciliation';
import { createWebhookActivities, type EventRecords } from './webhooks';
import { recordRefundRequest, succeededRefundAmount } from '../src/refunds/repository';
import { markReceiptConflict } from '../src/callbacks/receipts';
import { createWebhookRecoveryActivities } from './webhooks/recovery';
import { instrumentActivities } from './instrument';
import { createOrderActivities } from './orders';
import { orderEventData } from '../src/orders/repository';
import { checkoutUrlOf } from '../src/checkout/signed-url';
import { approvalLinkOf } from '../src/orders/approval-token';

export interface ActivityDeps {
  db: Db;
  config: Config;
  logger: Logger;
  /** the sandbox bank and card provider (src/simulators/providers.ts), started on first use */
  sandbox: SandboxProviders;
  /** how webhook endpoint host names are resolved at connect (dns.lookup when absent; tests inject one) */
  resolve?: Resolver;
}

/** Every activity logs with orderId, paymentId and workflowId; webhook attempts are metered (./instrument). */
export function createActivities(deps: ActivityDeps) {
  // each slice's declared dependencies on the others, wired here
  const payments = paymentRecords(deps.db);
  const records: EventRecords = {
    payment: (id) => payments.byId(id),
    reached: (id, status) => payments.reached(id, status),
    refunded: (refundId, paymentId) => succeededRefundAmount(deps.db, refundId, paymentId),
    orderEvent: (e) =>
      orderEventData(
        deps.db,
        e,
        async (id) => {
          const p = await paymentById(deps.db, id);
          if (!p) return undefined;
          const expiresAt = p.expiresAt ? p.expiresAt.toISOString() : null;
          return {
            qrPayload: (p.details as { qr?: { payload?: string } } | undefined)?.qr?.payload ?? null,
            expiresAt,
            checkoutUrl: expiresAt ? checkoutUrlOf(deps.config, id, expiresAt) : null,
          };
        },
        (id, expiresAtMs) => approvalLinkOf(deps.config.publicBaseUrl, deps.config.identity.secret, id, expiresAtMs),
      ),
  };
  const webhooks = createWebhookActivities({ ...deps, records });
  const card = createCardProviderActivities(deps);
  return instrumentActivities({
    ...createPaymentActivities({
      db: deps.db,
      webhooks,
      card,
      signingKey: deps.config.results.signingKey,
      logger: deps.logger,
    }),
    ...createLateResultActivities({
      ...deps,
      receipts: { markConflict: (receiptId) => markReceiptConflict(deps.db, receiptId) },
    }),
    ...createCallbackActivities({ db: deps.db, payments }),
    ...webhooks,
    ...createWebhookRecoveryActivities({ ...deps, records }),
    ...createNotificationActivities(deps),
    ...card,
    ...createBankActivities(deps),
    ...createRefundActivities({ ...deps, payments: paymentRecords }),
    ...createReconciliationActivities(deps),
    ...createOrderActivities({
      ...deps,
      card,
      ledgers: {
        createPendingPayment: (p) => createPendingPayment(deps.db, p),
        paymentById: (id) => paymentById(deps.db, id),
        settleAuthorization: (s) => settleAuthorization(deps.db, s),
        recordRefund: (r) => recordRefundRequest(deps.db, paymentRecords, r),
      },
    }),
  });
}

export type Activities = ReturnType<typeof createActivities>;
