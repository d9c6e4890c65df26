/** Search attributes that operators filter on in Temporal Web (registered by the dev server start). */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const OrderIdKey = defineSearchAttributeKey('OrderId', SearchAttributeType.KEYWORD);
export const PaymentMethodKey = defineSearchAttributeKey('PaymentMethod', SearchAttributeType.KEYWORD);
export const PaymentStatusKey = defineSearchAttributeKey('PaymentStatus', SearchAttributeType.KEYWORD);
