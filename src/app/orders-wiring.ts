/**
 * The orders slice over the payments slice's functions (one owner per table): the composition
 * root hands src/orders the payments rows it reads and the row it writes for an authorisation.
 */
import type { AppDeps } from '../http/deps';
import { createOrderService, type OrderService } from '../orders/service';
import { createPendingPayment, paymentByOrderId } from '../payments/repository';

export function orderServiceOf(deps: AppDeps): OrderService {
  return createOrderService({
    config: deps.config,
    db: deps.db,
    temporal: deps.temporal,
    payments: {
      paymentByOrderId: (orderId) => paymentByOrderId(deps.db, orderId),
      createPendingPayment: (row) => createPendingPayment(deps.db, row),
    },
  });
}
