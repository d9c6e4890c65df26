/**
 * Prometheus metrics (prom-client), one registry per process, served at /metrics
 * (src/app/routes/metrics.ts); labels come from the matched route pattern, never the raw path.
 * Counted where the thing happens: talat_http_requests_total and _request_duration_seconds (every
 * request), talat_callbacks_total{provider,outcome,reason}, talat_webhook_attempts_total{result}
 * and _attempt_duration_seconds (activities/instrument.ts), talat_payment_transitions_total,
 * talat_rate_limit_refusals_total, talat_webhook_dead_letters_open (read when scraped),
 * talat_alerts_total, talat_refund_redrives_total. Temporal's worker metrics (temporal_*) come from the SDK runtime's exporter
 * (TEMPORAL_METRICS_PORT) and are appended to /metrics by the gateway of the same process.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'talat_' });

export const httpRequests = new Counter({
  name: 'talat_http_requests_total',
  help: 'HTTP requests by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'talat_http_request_duration_seconds',
  help: 'HTTP request duration by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const callbacks = new Counter({
  name: 'talat_callbacks_total',
  help: 'Provider callbacks by provider and outcome (accepted, duplicate, rejected); reason is the error name of a rejection',
  labelNames: ['provider', 'outcome', 'reason'] as const,
  registers: [registry],
});

export const webhookAttempts = new Counter({
  name: 'talat_webhook_attempts_total',
  help: 'Webhook delivery attempts by result (delivered, http_error, network_error, cancelled, failed)',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const webhookAttemptDuration = new Histogram({
  name: 'talat_webhook_attempt_duration_seconds',
  help: 'Duration of one webhook attempt (the POST and its record) by result',
  labelNames: ['result'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const paymentTransitions = new Counter({
  name: 'talat_payment_transitions_total',
  help: 'Payment status transitions by payment method and new status',
  labelNames: ['method', 'to'] as const,
  registers: [registry],
});

export const rateLimitRefusals = new Counter({
  name: 'talat_rate_limit_refusals_total',
  help: 'Requests refused with 429 by limiter (payment_api, wallet_handler, storefront_auth)',
  labelNames: ['limiter'] as const,
  registers: [registry],
});

export const deadLettersOpen = new Gauge({
  name: 'talat_webhook_dead_letters_open',
  help: 'Webhook dead letters not yet delivered, still retrying or given up (read from Postgres at scrape time)',
  registers: [registry],
});

export const alerts = new Counter({
  name: 'talat_alerts_total',
  help: 'Administrator alerts by result (sent, suppressed into the digest)',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const refundRedrives = new Counter({
  name: 'talat_refund_redrives_total',
  help: 'Pending refunds re-sent to their workflow by the workers, by result (accepted, failed)',
  labelNames: ['result'] as const,
  registers: [registry],
});
