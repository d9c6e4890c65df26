/**
 * The one module that reads process.env.
 *
 * Every setting has a documented default (docs/configuration.md); a bad value stops the
 * process with a message that names the variable. Other modules receive a `Config` object.
 */
import fs from 'node:fs';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { PROVIDER_NAMES, type ProviderName } from './domain/providers';
import { QUEUE_KINDS, type QueueKind } from './domain/temporal';
import { parseKeyRing, type KeyRing } from './key-ring';
import { GENERATED_KEY_VARS, generatedKeysOf } from './stack/keys';

export const PROVIDERS = PROVIDER_NAMES;
export type { ProviderName };

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const optionalUrl = z
  .string()
  .url()
  .optional()
  .or(z.literal('').transform(() => undefined));
const bucketName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name (3-63 lower-case letters, digits, dots, hyphens)');
const csv = z
  .string()
  .default('')
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );

/** Development default of the providers' addresses: loopback only, refused in production. */
const DEV_PROVIDER_IPS = '127.0.0.0/8,::1/128';

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** log lines written in batches (src/logger.ts); off: one write per line, e.g. to watch with tail -f */
  LOG_BUFFER: z.enum(['on', 'off']).default('on'),
  DATA_DIR: z.string().min(1).default('.data'),
  BODY_LIMIT_KB: positiveInt.max(10_240).default(100),

  DATABASE_URL: optionalUrl,
  PG_PORT: port.default(5433),
  /** how long a batched write waits for others (src/db/write-batch.ts): receipts' finishes, webhook attempts */
  WRITE_BATCH_MS: z.coerce.number().int().min(0).max(1000).default(50),

  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('talat-payments'),
  TEMPORAL_CLI_PATH: z.string().min(1).optional(),
  /** a prebuilt workflow bundle (`npm run build` writes dist/workflow-bundle.js, which compiled workers find themselves) */
  WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
  /** the worker role's /healthz and /readyz */
  WORKER_HTTP_PORT: port.default(3001),
  /** the task queues this process's worker polls (docs/deploy.md): all three unless told */
  WORKER_QUEUES: csv.pipe(
    z
      .array(z.enum(QUEUE_KINDS, { message: `each one of ${QUEUE_KINDS.join(', ')}` }))
      .transform((q) => (q.length ? [...new Set(q)] : [...QUEUE_KINDS]) as QueueKind[]),
  ),
  /** roles apply pending migrations at start (under an advisory lock); auto: on except in production */
  MIGRATE_ON_START: z.enum(['on', 'off', 'auto']).default('auto'),
  SHUTDOWN_GRACE_S: positiveInt.max(600).default(20),
  /** a role whose start-up has not finished by then exits 1, naming the step it was on */
  STARTUP_TIMEOUT_S: positiveInt.max(600).default(60),
  TEMPORAL_METRICS_PORT: port.optional(),
  /** GET /metrics: public, or only for a key with the scope metrics; auto: key in production */
  METRICS_ACCESS: z.enum(['public', 'key', 'auto']).default('auto'),
  TEMPORAL_CODEC_KEYS: z.string().min(1).optional(),
  /** what the codec seals: protobuf, or json while older processes that read only json still run */
  TEMPORAL_CODEC_SEAL: z.enum(['protobuf', 'json']).default('protobuf'),
  TEMPORAL_WEB_ORIGIN: csv,
  /** mTLS to the Temporal frontend (client and worker): PEM file paths; CERT and KEY go together */
  TEMPORAL_TLS_CERT: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY: z.string().min(1).optional(),
  TEMPORAL_TLS_CA: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** HMAC key of the proofs a payment result signal carries (the gateway signs, the worker verifies) */
  RESULT_SIGNING_KEY: z.string().min(32, 'at least 32 characters').optional(),
  /** a provider's success on an expired or failed payment: refund it automatically, or list it for review */
  LATE_PAYMENT_POLICY: z.enum(['refund', 'review']).default('refund'),
  /** a refund still pending this long (its update maybe never accepted) is re-sent by the workers */
  REFUND_REDRIVE_AFTER_S: positiveInt.min(10).max(86_400).default(60),
  /** orders: what a card authorisation holds above the estimate, in percent (docs/orders.md) */
  ORDER_AUTH_MARGIN_PERCENT: z.coerce.number().int().min(0).max(50).default(10),
  /** orders: seconds after authorisation when an unfinalised order is captured or released (a card hold lapses after about 7 days) */
  ORDER_AUTH_LAPSE_S: positiveInt.max(30 * 86_400).default(6 * 86_400),
  /** orders: what the lapse timer does with an unfinalised authorisation */
  ORDER_LAPSE_ACTION: z.enum(['capture', 'release']).default('capture'),
  /** orders: an unpaid top-up settles the order at what was paid, or cancels it (all refunded) */
  ORDER_TOPUP_EXPIRED: z.enum(['settle', 'cancel']).default('settle'),
  /** orders: a substitution line raising the price by more than this (THB) waits for the customer's approval */
  ORDER_APPROVAL_THRESHOLD: z.coerce.number().min(0).max(1_000_000).default(50),
  /** orders: seconds the customer has to approve or decline; then ORDER_APPROVAL_DEFAULT applies */
  ORDER_APPROVAL_TIMEOUT_S: positiveInt.max(7 * 86_400).default(1800),
  /** orders: what a substitution nobody decided in time becomes */
  ORDER_APPROVAL_DEFAULT: z.enum(['approve', 'decline']).default('decline'),

  PUBLIC_BASE_URL: optionalUrl,
  QR_EXPIRY_S: positiveInt.default(900),
  CARD_PAYMENT_TIMEOUT_S: positiveInt.default(1800),
  PROMPTPAY_ID: z
    .string()
    .regex(/^[0-9+-]{10,20}$/, 'a phone number, national id, tax id or e-wallet id')
    .default('0801234567'),
  PROMPTPAY_BILLER_ID: z
    .string()
    .regex(/^\d{13}(\d{2})?$/, 'a biller id: the 13-digit tax id and a 2-digit suffix (15 digits; 13 means suffix 00)')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  MERCHANT_NAME: z.string().min(1).max(25).default('SALA MARKET'),
  MERCHANT_CITY: z
    .string()
    .regex(/^[\x20-\x7e]{1,15}$/, 'at most 15 printable ASCII characters')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  CARD_PROVIDER_URL: optionalUrl,
  CARD_PROVIDER_KEY: z.string().min(1).optional(),
  BANK_API_URL: optionalUrl,
  BANK_API_KEY: z.string().min(1).optional(),
  PROVIDER_TIMEOUT_MS: positiveInt.max(60_000).default(5000),
  RATE_LIMIT_PER_MINUTE: positiveInt.default(1000),
  RATE_LIMIT_PER_SECOND: positiveInt.default(100),
  API_KEY_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
  STOREFRONT_VERSION_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(1000),

  CALLBACK_MAX_AGE_S: positiveInt.default(300),
  /** how old an unfinished callback receipt may be for a duplicate to wait for it (src/callbacks/processor.ts) */
  CALLBACK_DUPLICATE_WAIT_MS: z.coerce.number().int().min(0).max(10_000).default(2000),
  /** how long a receipt may stay unfinished before a duplicate takes its delivery over (its gateway died) */
  CALLBACK_DELIVERY_LEASE_S: z.coerce.number().int().min(10).max(3600).default(30),
  CALLBACK_REDELIVERY_S: z.coerce.number().int().min(1).max(3600).default(10),
  TRUSTED_PROXIES: csv,

  SMTP_URL: optionalUrl,
  ADMIN_EMAIL: z.string().email().default('admin@talat.local'),
  MAIL_FROM: z.string().email().default('talat@talat.local'),
  SENTRY_DSN: optionalUrl,

  SHOP_ORIGIN: z.string().min(1).default('http://localhost:5173'),
  /** origins a hosted checkout's returnUrl may point to (docs/checkout.md); unset: SHOP_ORIGIN's */
  CHECKOUT_RETURN_ORIGINS: csv,
  SCHEMA_BASE_PATH: z
    .string()
    .regex(/^(\/[A-Za-z0-9._-]+)*$/, 'a path such as /schema or empty')
    .default('/schema'),
  SCHEMA_NAME: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/)
    .default('talat'),
  STOREFRONT_KEY_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  IDENTITY_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  IDENTITY_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'a region such as ap-southeast-1')
    .default('ap-southeast-1'),
  IDENTITY_CREDENTIALS_TTL_S: positiveInt.min(60).max(43_200).default(3600),
  SIGV4_SERVICE: z
    .string()
    .regex(/^[a-z0-9-]+$/)
    .default('execute-api'),
  STOREFRONT_AUTH_RATE_PER_MIN: positiveInt.default(60),
  SEARCH_MAX_QUERY_LENGTH: positiveInt.max(1000).default(200),
  WEBHOOK_SECRET_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, '32 bytes as 64 hex digits or 44 base64 characters')
    .optional(),
  WEBHOOK_TIMEOUT_MS: positiveInt.max(60_000).default(5000),
  /** first attempts made inside a payment's settle step at once per endpoint (per worker process); 0: none */
  WEBHOOK_INLINE_PER_ENDPOINT: z.coerce.number().int().min(0).max(1000).default(32),
  /** development and tests only: webhook endpoints on loopback (127.0.0.0/8, ::1, localhost) */
  WEBHOOK_ALLOW_LOOPBACK: z.enum(['on', 'off']).default('off'),
  /** replaced by WEBHOOK_ALLOW_LOOPBACK (refused with a message saying so) */
  WEBHOOK_ALLOW_PRIVATE_URLS: z.string().optional(),
  PAID_ORDER_CONFIRM_WINDOW_S: positiveInt.max(86_400).default(120),
  SMTP_TIMEOUT_MS: positiveInt.max(120_000).default(5000),
  SMTP_SINK_PORT: port.default(2525),
  SIMULATOR_DELAY_S: positiveInt.max(3600).default(20),
  SIMULATORS: z.enum(['on', 'off', 'auto']).default('auto'),

  // storefront assets in an S3-compatible object store (docs/storefront.md)
  S3_ENDPOINT: optionalUrl,
  S3_PUBLIC_ENDPOINT: optionalUrl,
  S3_REGION: z
    .string()
    .regex(/^[a-z0-9-]{2,40}$/, 'a region such as us-east-1')
    .default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().min(3).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(8).optional(),
  S3_BUCKET_PRICES: bucketName.default('talat-prices'),
  S3_BUCKET_IMAGES: bucketName.default('talat-images'),
  S3_FORCE_PATH_STYLE: z.enum(['on', 'off', 'auto']).default('auto'),
  S3_PRESIGN_EXPIRY_S: positiveInt.min(60).max(604_800).default(900),
  OBJECT_STORE_PORT: port.default(9000),
  OBJECT_STORE_BIN: z.string().min(1).optional(),
  CDN_BASE_URL: optionalUrl,
  ASSET_PUBLISH_POLL_MS: positiveInt.min(100).max(3_600_000).default(1000),
  ALERT_WINDOW_S: positiveInt.max(86_400).default(3600),
  WALLET_RATE_PER_MINUTE: positiveInt.default(600),
  WALLET_RATE_PER_SECOND: positiveInt.default(50),
  WALLET_RATE_ALLOW: csv,
  // reconciliation (docs/reconciliation.md)
  S3_BUCKET_SETTLEMENTS: bucketName.default('talat-settlements'),
  RECONCILIATION_SCHEDULES: z.enum(['on', 'off']).default('on'),
  RECONCILIATION_CRON: z
    .string()
    .regex(/^\S+( \S+){4}$/, 'a cron expression of five fields (minute hour day month weekday), Asia/Bangkok')
    .default('0 6 * * *'),
  RECONCILIATION_MODE: z.enum(['live', 'sandbox']).optional(),
  RECONCILIATION_FILE_WAIT_S: z.coerce
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .default(21_600),
  RECONCILIATION_FILE_POLL_S: positiveInt.max(86_400).default(900),
});

export type Config = ReturnType<typeof loadConfig>;

export class ConfigError extends Error {
  constructor(public readonly issues: string[]) {
    super(`Invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parse and validate the environment; throws ConfigError naming each bad variable.
 * A variable set to the empty string counts as unset (`VAR=` in compose and .env files).
 */
export function loadConfig(rawEnv: Record<string, string | undefined> = process.env) {
  const given = Object.fromEntries(Object.entries(rawEnv).filter(([, v]) => v !== ''));
  // outside production a key left unset is the data directory's generated one (src/stack/keys.ts)
  const env =
    given.NODE_ENV !== 'production' && GENERATED_KEY_VARS.some((v) => !given[v])
      ? { ...generatedKeysOf(given.DATA_DIR ?? '.data'), ...given }
      : given;
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map(
        (i) => `${i.path.join('.')}: ${i.message} (got ${JSON.stringify(env[String(i.path[0])])})`,
      ),
    );
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  const issues: string[] = [];
  if (e.CALLBACK_DUPLICATE_WAIT_MS >= e.CALLBACK_DELIVERY_LEASE_S * 1000)
    issues.push('CALLBACK_DUPLICATE_WAIT_MS: must be shorter than CALLBACK_DELIVERY_LEASE_S');

  const providers = {} as Record<ProviderName, { secret: string; ips: string[] }>;
  for (const name of PROVIDERS) {
    const secretVar = `PROVIDER_SECRET_${name}`;
    const ipsVar = `PROVIDER_IPS_${name}`;
    const secret = env[secretVar] ?? '';
    const ips = (env[ipsVar] || (production ? '' : DEV_PROVIDER_IPS))
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (!secret) issues.push(`${secretVar}: required in production`);
    else if (secret.length < 16) issues.push(`${secretVar}: must be at least 16 characters`);
    if (ips.length === 0) issues.push(`${ipsVar}: required in production (comma-separated CIDRs)`);
    for (const cidr of ips) if (!isCidr(cidr)) issues.push(`${ipsVar}: ${JSON.stringify(cidr)} is not a CIDR range`);
    providers[name] = { secret, ips };
  }
  for (const cidr of e.TRUSTED_PROXIES)
    if (!isCidr(cidr)) issues.push(`TRUSTED_PROXIES: ${JSON.stringify(cidr)} is not a CIDR range`);
  for (const cidr of e.WALLET_RATE_ALLOW)
    if (!isCidr(cidr)) issues.push(`WALLET_RATE_ALLOW: ${JSON.stringify(cidr)} is not a CIDR range`);
  // production never falls back to the embedded services of `npm start`
  if (production && !e.DATABASE_URL) issues.push('DATABASE_URL: required in production (postgres://...)');
  if (production && !e.TEMPORAL_ADDRESS) issues.push('TEMPORAL_ADDRESS: required in production (host:port)');
  if (production && !e.STOREFRONT_KEY_SECRET) issues.push('STOREFRONT_KEY_SECRET: required in production');
  if (production && !e.IDENTITY_SECRET) issues.push('IDENTITY_SECRET: required in production');
  if (production && !e.WEBHOOK_SECRET_KEY)
    issues.push('WEBHOOK_SECRET_KEY: required in production (32 random bytes, hex or base64)');
  if (production && !e.RESULT_SIGNING_KEY)
    issues.push(
      'RESULT_SIGNING_KEY: required in production (at least 32 random characters, the same on gateway and worker)',
    );
  if (!!e.TEMPORAL_TLS_CERT !== !!e.TEMPORAL_TLS_KEY)
    issues.push(
      `${e.TEMPORAL_TLS_CERT ? 'TEMPORAL_TLS_KEY' : 'TEMPORAL_TLS_CERT'}: required with ${e.TEMPORAL_TLS_CERT ? 'TEMPORAL_TLS_CERT' : 'TEMPORAL_TLS_KEY'} (mTLS needs the client certificate and its key)`,
    );
  for (const v of ['TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CA'] as const) {
    const file = e[v];
    if (file && !fs.existsSync(file)) issues.push(`${v}: ${file} does not exist`);
  }
  if (e.WEBHOOK_ALLOW_PRIVATE_URLS !== undefined)
    issues.push(
      'WEBHOOK_ALLOW_PRIVATE_URLS: no longer exists; webhook URLs must point to public addresses, and WEBHOOK_ALLOW_LOOPBACK=on allows loopback outside production',
    );
  if (production && e.WEBHOOK_ALLOW_LOOPBACK === 'on')
    issues.push('WEBHOOK_ALLOW_LOOPBACK: must be off in production (loopback webhooks are for development and tests)');
  let codecKeys: KeyRing | undefined;
  if (production && !e.TEMPORAL_CODEC_KEYS)
    issues.push(
      'TEMPORAL_CODEC_KEYS: required in production (<id>:<32 random bytes, base64 or hex>, comma-separated, the first encrypts)',
    );
  else {
    try {
      codecKeys = { ...parseKeyRing(e.TEMPORAL_CODEC_KEYS ?? ''), seal: e.TEMPORAL_CODEC_SEAL };
    } catch (err) {
      issues.push(`TEMPORAL_CODEC_KEYS: ${(err as Error).message}`);
    }
  }
  // CHECKOUT_RETURN_ORIGINS must list origins; without it, SHOP_ORIGIN's entries count by their origin
  const trimmed = (list: string[]) => list.map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean);
  const returnOrigins = e.CHECKOUT_RETURN_ORIGINS.length
    ? trimmed(e.CHECKOUT_RETURN_ORIGINS)
    : trimmed(e.SHOP_ORIGIN.split(',')).flatMap((o) => (URL.canParse(o) ? [new URL(o).origin] : []));
  for (const o of returnOrigins)
    if (!URL.canParse(o) || new URL(o).origin !== o)
      issues.push(`CHECKOUT_RETURN_ORIGINS: ${JSON.stringify(o)} is not an origin such as https://shop.example`);
  if (issues.length) throw new ConfigError(issues);

  const dataDir = path.resolve(e.DATA_DIR);
  return {
    env: e.NODE_ENV,
    production,
    host: e.HOST,
    port: e.PORT,
    logLevel: e.LOG_LEVEL,
    logBuffered: e.LOG_BUFFER === 'on',
    /** GET /metrics needs a key with the scope metrics (METRICS_ACCESS) */
    metricsNeedKey: e.METRICS_ACCESS === 'auto' ? production : e.METRICS_ACCESS === 'key',
    dataDir,
    bodyLimitBytes: e.BODY_LIMIT_KB * 1024,
    database: { url: e.DATABASE_URL, embeddedPort: e.PG_PORT, writeBatchMs: e.WRITE_BATCH_MS },
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      embeddedPort: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      workflowBundlePath: e.WORKFLOW_BUNDLE_PATH,
      /** the SDK runtime's Prometheus exporter (worker metrics, temporal_*), on 127.0.0.1; unset: none (`npm start`: a free port) */
      metricsPort: e.TEMPORAL_METRICS_PORT === 0 ? undefined : e.TEMPORAL_METRICS_PORT,
      /** TEMPORAL_METRICS_PORT=0: no exporter, not even the default one of `npm start` */
      metricsOff: e.TEMPORAL_METRICS_PORT === 0,
      /** the payload codec's key ring (AES-256-GCM; the first key encrypts) */
      codecKeys: codecKeys!,
      /** mTLS / TLS to the frontend (file paths); undefined: plain TCP (the embedded dev server) */
      tls:
        e.TEMPORAL_TLS_CERT || e.TEMPORAL_TLS_CA || e.TEMPORAL_TLS_SERVER_NAME
          ? {
              certPath: e.TEMPORAL_TLS_CERT,
              keyPath: e.TEMPORAL_TLS_KEY,
              caPath: e.TEMPORAL_TLS_CA,
              serverName: e.TEMPORAL_TLS_SERVER_NAME,
            }
          : undefined,
      /** origins of Temporal Web allowed to call /codec from the browser */
      webOrigins: e.TEMPORAL_WEB_ORIGIN.length
        ? e.TEMPORAL_WEB_ORIGIN.map((o) => o.replace(/\/+$/, ''))
        : [`http://127.0.0.1:${e.TEMPORAL_UI_PORT}`, `http://localhost:${e.TEMPORAL_UI_PORT}`],
    },
    roles: {
      workerHttpPort: e.WORKER_HTTP_PORT,
      /** the queues the worker polls: payments, webhooks, background (each with its own worker and slots) */
      workerQueues: e.WORKER_QUEUES,
      migrateOnStart: e.MIGRATE_ON_START === 'auto' ? !production : e.MIGRATE_ON_START === 'on',
      shutdownGraceMs: e.SHUTDOWN_GRACE_S * 1000,
      startupTimeoutMs: e.STARTUP_TIMEOUT_S * 1000,
      /** roles run the callback simulator only when SIMULATORS=on (auto leaves it to `npm start`) */
      simulators: e.SIMULATORS === 'on',
    },
    publicBaseUrl: e.PUBLIC_BASE_URL ?? `http://${e.HOST}:${e.PORT}`,
    payments: {
      qrExpirySeconds: e.QR_EXPIRY_S,
      cardTimeoutSeconds: e.CARD_PAYMENT_TIMEOUT_S,
      promptPayId: e.PROMPTPAY_ID,
      /** set: /qrpayment emits a tag-30 bill payment (Ref1 = the order reference) instead of tag 29 */
      billerId: e.PROMPTPAY_BILLER_ID,
      merchantName: e.MERCHANT_NAME,
      merchantCity: e.MERCHANT_CITY,
      cardProviderUrl: e.CARD_PROVIDER_URL,
      cardProviderKey: e.CARD_PROVIDER_KEY,
      bankApiUrl: e.BANK_API_URL,
      bankApiKey: e.BANK_API_KEY,
      providerTimeoutMs: e.PROVIDER_TIMEOUT_MS,
      rateLimit: { perMinute: e.RATE_LIMIT_PER_MINUTE, perSecond: e.RATE_LIMIT_PER_SECOND },
      /** how long a key lookup (valid, unknown or revoked) is reused by this gateway */
      apiKeyCacheMs: e.API_KEY_CACHE_MS,
    },
    callbacks: {
      maxAgeSeconds: e.CALLBACK_MAX_AGE_S,
      maxFutureSeconds: 60,
      duplicateWaitMs: e.CALLBACK_DUPLICATE_WAIT_MS,
      deliveryLeaseMs: e.CALLBACK_DELIVERY_LEASE_S * 1000,
      /** how often each gateway looks for receipts left unfinished past the lease (src/callbacks/redelivery.ts) */
      redeliveryMs: e.CALLBACK_REDELIVERY_S * 1000,
      trustedProxies: e.TRUSTED_PROXIES,
      providers,
    },
    mail: {
      smtpUrl: e.SMTP_URL,
      adminEmail: e.ADMIN_EMAIL,
      from: e.MAIL_FROM,
      timeoutMs: e.SMTP_TIMEOUT_MS,
      sinkPort: e.SMTP_SINK_PORT,
    },
    webhooks: {
      /** AES-256-GCM key of the endpoint secrets at rest */
      secretKey: Buffer.from(
        e.WEBHOOK_SECRET_KEY ?? '',
        /^[0-9a-fA-F]{64}$/.test(e.WEBHOOK_SECRET_KEY ?? '') ? 'hex' : 'base64',
      ),
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      /**
       * the bulkhead of the settle step: at most this many first attempts per endpoint run inside
       * payment workflows at once (each may hold a payments slot up to timeoutMs); the rest, and
       * every first attempt to an endpoint whose last attempt failed in the last 30 s, are made
       * by the webhook retry workflow on the webhooks queue instead
       */
      inlinePerEndpoint: e.WEBHOOK_INLINE_PER_ENDPOINT,
      /** the destination policy (src/webhooks/url-policy.ts): https in production, loopback only when allowed */
      urlPolicy: { requireHttps: production, allowLoopback: e.WEBHOOK_ALLOW_LOOPBACK === 'on' },
    },
    paidOrders: { confirmWindowSeconds: e.PAID_ORDER_CONFIRM_WINDOW_S },
    results: {
      /** HMAC-SHA256 key of the payment result proofs (src/result-proof.ts) */
      signingKey: e.RESULT_SIGNING_KEY ?? '',
      /** a success after the payment expired or failed: refund (default) or review */
      latePaymentPolicy: e.LATE_PAYMENT_POLICY,
    },
    /** refunds still pending after afterSeconds are re-sent to their workflow (src/refunds/redrive.ts) */
    refunds: { redriveAfterSeconds: e.REFUND_REDRIVE_AFTER_S },
    /** orders settled on what was picked (src/orders, docs/orders.md) */
    orders: {
      authMarginPercent: e.ORDER_AUTH_MARGIN_PERCENT,
      lapseSeconds: e.ORDER_AUTH_LAPSE_S,
      lapseAction: e.ORDER_LAPSE_ACTION,
      topUpExpired: e.ORDER_TOPUP_EXPIRED,
      approvalThresholdSatang: Math.round(e.ORDER_APPROVAL_THRESHOLD * 100),
      approvalTimeoutSeconds: e.ORDER_APPROVAL_TIMEOUT_S,
      approvalDefault: e.ORDER_APPROVAL_DEFAULT,
    },
    /** the same administrator alert is e-mailed at most once per window; repeats go into a digest */
    alertWindowSeconds: e.ALERT_WINDOW_S,
    /** /wallet/callback per client address; addresses in `allow` (the wallet gateway) are not limited */
    walletRateLimit: {
      perMinute: e.WALLET_RATE_PER_MINUTE,
      perSecond: e.WALLET_RATE_PER_SECOND,
      allow: e.WALLET_RATE_ALLOW,
    },
    simulatorDelaySeconds: e.SIMULATOR_DELAY_S,
    sentryDsn: e.SENTRY_DSN,
    storefront: {
      shopOrigin: e.SHOP_ORIGIN,
      schemaBasePath: e.SCHEMA_BASE_PATH,
      schemaName: e.SCHEMA_NAME,
      keySecret: e.STOREFRONT_KEY_SECRET ?? '',
      authRatePerMinute: e.STOREFRONT_AUTH_RATE_PER_MIN,
      searchMaxQueryLength: e.SEARCH_MAX_QUERY_LENGTH,
      /** how long this gateway reuses the data versions that key its caches and ETags */
      versionCacheMs: e.STOREFRONT_VERSION_CACHE_MS,
      /** Credential scope that /auth/apikey/get accepts: <date>/<region>/<service>/aws4_request. */
      sigv4: { region: e.IDENTITY_REGION, service: e.SIGV4_SERVICE },
    },
    identity: {
      secret: e.IDENTITY_SECRET ?? '',
      region: e.IDENTITY_REGION,
      credentialsTtlSeconds: e.IDENTITY_CREDENTIALS_TTL_S,
    },
    simulators: e.SIMULATORS === 'auto' ? !production : e.SIMULATORS === 'on',
    /** the hosted checkout page: where its returnUrl may point */
    checkout: { returnOrigins },
    objectStore: objectStoreConfig(e, production),
    reconciliation: {
      bucket: e.S3_BUCKET_SETTLEMENTS,
      /** one Temporal Schedule per provider, created at start-up (npm start, the worker role) */
      schedules: e.RECONCILIATION_SCHEDULES === 'on',
      /** when each provider's run starts, Asia/Bangkok; it reconciles the day before */
      cron: e.RECONCILIATION_CRON,
      /** whose payments the providers' files settle: live in production, else the sandbox's */
      mode: e.RECONCILIATION_MODE ?? (production ? 'live' : 'sandbox'),
      fileWaitSeconds: e.RECONCILIATION_FILE_WAIT_S,
      filePollSeconds: e.RECONCILIATION_FILE_POLL_S,
    },
  };
}

/** Development credentials of the embedded object store: documented, loopback only. */
export const DEV_OBJECT_STORE_CREDENTIALS = {
  accessKeyId: 'talat-dev',
  secretAccessKey: 'talat-dev-object-store-secret',
} as const;

/**
 * The object store of the storefront's assets. S3_ENDPOINT unset: the embedded store of `npm start`
 * (its endpoint is filled in when it runs) outside production, Amazon S3 of S3_REGION in production.
 */
function objectStoreConfig(e: z.infer<typeof envSchema>, production: boolean) {
  const embedded = !e.S3_ENDPOINT && !production;
  const endpoint = e.S3_ENDPOINT ?? (production ? `https://s3.${e.S3_REGION}.amazonaws.com` : undefined);
  const dev = embedded ? DEV_OBJECT_STORE_CREDENTIALS : undefined;
  return {
    /** undefined until the embedded store has started */
    endpoint,
    /** host in the presigned URLs handed to clients (the store as the outside reaches it) */
    publicEndpoint: e.S3_PUBLIC_ENDPOINT,
    region: e.S3_REGION,
    accessKeyId: e.S3_ACCESS_KEY_ID ?? dev?.accessKeyId,
    secretAccessKey: e.S3_SECRET_ACCESS_KEY ?? dev?.secretAccessKey,
    forcePathStyle: e.S3_FORCE_PATH_STYLE === 'auto' ? !!e.S3_ENDPOINT || embedded : e.S3_FORCE_PATH_STYLE === 'on',
    buckets: { prices: e.S3_BUCKET_PRICES, images: e.S3_BUCKET_IMAGES },
    presignExpirySeconds: e.S3_PRESIGN_EXPIRY_S,
    embedded: embedded ? { port: e.OBJECT_STORE_PORT, bin: e.OBJECT_STORE_BIN } : undefined,
    /** `{cdn}/{productId}[-{variant}]`; unset: the gateway's own /cdn path (served from the image bucket) */
    cdnBaseUrl: (e.CDN_BASE_URL ?? `${e.PUBLIC_BASE_URL ?? `http://${e.HOST}:${e.PORT}`}/cdn`).replace(/\/+$/, ''),
    publishPollMs: e.ASSET_PUBLISH_POLL_MS,
  };
}

/** An IPv4 or IPv6 CIDR range as ipaddr.js parses it (address and prefix length checked together). */
function isCidr(s: string): boolean {
  try {
    const [addr] = ipaddr.parseCIDR(s);
    // ipaddr.js also reads the legacy shorthands (`10.1/8`, hex octets); a config wants four decimal parts
    return addr.kind() === 'ipv6' || ipaddr.IPv4.isValidFourPartDecimal(s.split('/')[0]);
  } catch {
    return false;
  }
}
