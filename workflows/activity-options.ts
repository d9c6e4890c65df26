/**
 * The activity options the workflows share (one place for each kind of call). Timeouts and retry
 * policies are not workflow commands: changing them keeps recorded histories replaying.
 */
import type { ActivityOptions } from '@temporalio/workflow';

/** Postgres writes and reads of background workflows: retried until they succeed. */
export const DB_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
};

/** Provider calls (charge, refund): a few quick retries for network errors and 5xx; a 4xx is non-retryable. */
export const PROVIDER_CALL: ActivityOptions = {
  startToCloseTimeout: '15 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '5 seconds',
    maximumAttempts: 4,
  },
};

/** The administrator's e-mail: retried a while, then given up (the alert is also logged). */
export const ADMIN_MAIL: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumAttempts: 5 },
};
