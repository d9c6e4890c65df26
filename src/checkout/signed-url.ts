/**
 * What POST /qrpayment adds for the hosted checkout: the page's link (checkoutUrl, signed for
 * the payment until an hour after it expires) and the check of the shop's returnUrl, which must
 * be on one of CHECKOUT_RETURN_ORIGINS (default: SHOP_ORIGIN).
 */
import type { Config } from '../config';
import { AppError, ErrorCode } from '../domain/errors';
import { signCheckoutToken } from './token';

export const checkoutUrlOf = (config: Config, paymentId: string, expiresAt: string): string =>
  `${config.publicBaseUrl.replace(/\/+$/, '')}/checkout/${signCheckoutToken(config.identity.secret, paymentId, Date.parse(expiresAt))}`;

/** Throws 400 INVALID_INPUT unless `returnUrl` is on one of the shop's configured origins. */
export function checkReturnUrl(config: Config, returnUrl: string): void {
  let origin: string | undefined;
  try {
    origin = new URL(returnUrl).origin;
  } catch {
    origin = undefined;
  }
  if (!origin || !config.checkout.returnOrigins.includes(origin))
    throw new AppError(
      ErrorCode.INVALID_INPUT,
      'returnUrl must be on one of the shop origins (CHECKOUT_RETURN_ORIGINS)',
      {
        field: 'returnUrl',
        origin: origin ?? null,
        allowedOrigins: config.checkout.returnOrigins,
      },
    );
}
