/**
 * Fields every log line written inside a unit of work carries (an activity: orderId, paymentId,
 * workflowId), without threading a child logger through every function: the root logger's
 * mixin (src/logger.ts) adds the fields of the current AsyncLocalStorage context.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export type LogFields = Record<string, string>;

export const logContext = new AsyncLocalStorage<LogFields>();

export const withLogFields = <T>(fields: LogFields, fn: () => T): T =>
  logContext.run({ ...logContext.getStore(), ...fields }, fn);
