/**
 * The slices' services as the composition root builds them: each slice's declared dependencies
 * on the others wired here, once, for the routes and the console (docs/architecture.md).
 */
import type { AppDeps } from '../http/deps';
import { clockOf } from '../http/guards';
import { apiKeyInfoById } from '../http/middleware/api-key';
import { checkoutUrlOf, checkReturnUrl } from '../checkout/signed-url';
import { createLinkService, type LinkService } from '../links/service';
import {
  createPendingPayment,
  paymentById,
  paymentByOrderId,
  paymentRecords,
  paymentsByOrderIds,
} from '../payments/repository';
import { createOrderService, type OrderService } from '../orders/service';
import { createPaymentService, type PaymentSliceDeps } from '../payments/service';
import { refundsOf } from '../refunds/repository';
import { createRefundService } from '../refunds/service';

/** What the payments slice takes of the refunds and checkout slices. */
export const paymentSliceDeps = (deps: Pick<AppDeps, 'db' | 'config'>): PaymentSliceDeps => ({
  refunds: { ofPayment: (paymentId) => refundsOf(deps.db, paymentId) },
  checkout: {
    urlOf: (paymentId, expiresAt) => checkoutUrlOf(deps.config, paymentId, expiresAt),
    checkReturnUrl: (returnUrl) => checkReturnUrl(deps.config, returnUrl),
  },
});

export const paymentServiceOf = (deps: AppDeps) =>
  createPaymentService({
    config: deps.config,
    db: deps.db,
    temporal: deps.temporal,
    clock: clockOf(deps),
    ...paymentSliceDeps(deps),
  });

export const refundServiceOf = (deps: AppDeps) => createRefundService({ ...deps, payments: paymentRecords });

/** The link service, over the payment service and the payments and keys repositories. */
export const linkServiceOf = (deps: AppDeps): LinkService =>
  createLinkService({
    db: deps.db,
    config: deps.config,
    clock: clockOf(deps),
    createQrPayment: paymentServiceOf(deps).createQrPayment,
    paymentsByOrderIds: (ids, owner) => paymentsByOrderIds(deps.db, ids, owner),
    keyById: (id) => apiKeyInfoById(deps.db, id),
  });

/** The orders slice over the payments slice's functions: the rows it reads, the one it writes for an authorisation. */
export const orderServiceOf = (deps: AppDeps): OrderService =>
  createOrderService({
    config: deps.config,
    db: deps.db,
    temporal: deps.temporal,
    checkout: { urlOf: (paymentId, expiresAt) => checkoutUrlOf(deps.config, paymentId, expiresAt) },
    payments: {
      paymentByOrderId: (orderId, scope) => paymentByOrderId(deps.db, orderId, scope),
      paymentById: (paymentId) => paymentById(deps.db, paymentId),
      createPendingPayment: (row) => createPendingPayment(deps.db, row),
    },
  });
