/**
 * The activity options the workflows share (one place for each kind of call; provider calls:
 * ./provider-call.ts). Timeouts and retry
 * policies are not workflow commands: changing them keeps recorded histories replaying.
 */
import type { ActivityOptions } from '@temporalio/workflow';

/** Postgres writes and reads of background workflows: retried until they succeed. */
export const DB_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
};

/** The administrator's e-mail: retried a while, then given up (the alert is also logged). */
export const ADMIN_MAIL: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumAttempts: 5 },
};
