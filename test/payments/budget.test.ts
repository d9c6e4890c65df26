/**
 * The budget of one paid QR payment, as exact counts (issue 41): the Postgres statements and
 * transactions Talat's code sends (knex's query events; BEGIN/COMMIT/ROLLBACK are events too, so a
 * transaction is one knex transaction id or one statement outside any), split into the gateway's
 * create request, its callback request and the worker; and the Temporal events and workflow tasks
 * of the payment workflow and every workflow it starts. The gateway and the workers get a Db each,
 * on a database of this file's own, so the split is by owner, not by timing. Measured on the
 * second payment (the first warms caches). A change that adds a statement or an event fails here
 * until its numbers below are updated, on purpose, in the same commit. Not pg_stat_database: its
 * counters flush late and count the test's own reads; knex's events are exact and per owner.
 */
import request from 'supertest';
import { temporal as proto } from '@temporalio/proto';
import { createActivities } from '../../activities';
import { createQueueWorkers, type QueueWorkers } from '../../src/app/worker';
import { signPayload } from '../../src/callbacks/verify';
import { createDb, type Db } from '../../src/db/knex';
import { createEndpoint } from '../../src/webhooks/endpoints';
import { paymentWorkflowIdOf } from '../../src/payments';
import { sandboxProviders } from '../../src/simulators/providers';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { createTestStack, testDatabaseUrl, testLogger, uniq, waitFor, type TestStack } from '../support/stack';
import { startReceiver, type Receiver } from '../webhooks/helpers';
import { newKey } from './support';
import { tally } from '../support/statements';

/**
 * What one paid payment costs; every figure exact. A statement is named by its verb and the tables
 * it names (label()); the count of a phase is the length of its list. Update with the change.
 */
const BUDGET = {
  postgres: {
    create: {
      statements: ['select api_keys', 'insert rate_limits', 'insert payment_events payments'],
      transactions: 3,
    },
    callback: {
      // the claim (with the payment's lookup), then the finish: since issue 41, after the answer
      statements: ['insert callback_receipts payments', 'update callback_receipts payments'],
      transactions: 2,
    },
    worker: {
      statements: [
        // one statement: the transition, vouched for by its own WHERE (was a read first), and
        // the deliveries planned and read with their endpoints (were 4 statements, then 1 apart)
        'update payment_events payments webhook_deliveries webhook_endpoints',
        'insert webhook_attempts webhook_deliveries',
      ],
      transactions: 2,
    },
    /** the gateway's Db outside any request: nothing */
    gatewayIdle: { statements: [] as string[], transactions: 0 },
    /**
     * rows every payment of a key shares (its api_keys row, its webhook endpoint's row) that the
     * payment locked: none (the foreign keys' FOR KEY SHARE took both, a MultiXact when payments overlapped)
     */
    sharedRowsLocked: 0,
  },
  temporal: {
    'payment-<payment>': {
      // a delayed start (qrPaymentWorkflowV3, issue 41): no task before the result, no timer
      events: 8,
      workflowTasks: 1,
      types: [
        'WORKFLOW_EXECUTION_STARTED', // with a start delay until the QR's expiry
        'WORKFLOW_EXECUTION_SIGNALED', // the callback's result (signal-with-start: ends the delay)
        'WORKFLOW_TASK_SCHEDULED',
        'WORKFLOW_TASK_STARTED',
        'WORKFLOW_TASK_COMPLETED',
        'MARKER_RECORDED', // settlePayment: the transition and the first webhook attempt
        'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES', // PaymentStatus
        'WORKFLOW_EXECUTION_COMPLETED',
      ],
    },
  } as Record<string, { events: number; workflowTasks: number; types: string[] }>,
};
type Budget = typeof BUDGET;
/**
 * Ceilings on what Temporal stores of one paid QR payment (issue 41: 5,608 and 2,011 bytes before
 * the memo's one field; 4,001 and 847 before the memo lost the QR payload and CRC; 3,797 and 639
 * before the codec sealed protobuf instead of JSON with base64 inside).
 */
const BYTES = { history: 3_400, memo: 550 };
const EVENT_TYPE = proto.api.enums.v1.EventType;

type Phase = 'create' | 'callback' | 'gatewayIdle';
interface Seen {
  sql: string;
  txId?: string;
}

let stack: TestStack;
let workerDbOwn: Db;
let workers: QueueWorkers;
let workerRun: Promise<void>;
let receiver: Receiver;
let key: string;
/** the rows every payment of the key shares: `xmax` changes when a statement locks one */
let sharedRows: () => Promise<string[]>;
let phase: Phase = 'gatewayIdle';
let measured: Budget | undefined;
let counting = false;
const gatewaySeen: Record<Phase, Seen[]> = { create: [], callback: [], gatewayIdle: [] };
const workerSeen: Seen[] = [];

const DATABASE = 'talat_budget';

beforeAll(async () => {
  // the gateway's Db is the stack's; the workers get their own Db on the same database
  stack = await createTestStack({ worker: false, database: DATABASE });
  workerDbOwn = createDb(testDatabaseUrl(`${DATABASE}_w${process.env.JEST_WORKER_ID ?? '1'}`), { poolMax: 10 });
  installTemporalRuntime(testLogger, 'WARN');
  const activities = createActivities({
    db: workerDbOwn,
    config: stack.config,
    logger: testLogger,
    sandbox: sandboxProviders({ db: workerDbOwn }),
  });
  workers = await createQueueWorkers({
    address: process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
    namespace: 'default',
    paymentsQueue: stack.taskQueue,
    queues: ['payments', 'webhooks', 'background'],
    activities,
    workflowBundle: { codePath: process.env.TALAT_TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1 second',
    codecKeys: stack.config.temporal.codecKeys,
  });
  workerRun = workers.run();
  workerRun.catch(() => undefined);

  const owner = await newKey(stack.db);
  key = owner.key;
  receiver = await startReceiver(200);
  const endpoint = await createEndpoint(
    stack.db,
    stack.config,
    { id: owner.id, mode: 'sandbox' },
    { url: receiver.url },
  );
  sharedRows = async () => {
    const { rows } = await stack.db.raw<{ rows: { xmax: string }[] }>(
      `SELECT xmax::text FROM api_keys WHERE id = ? UNION ALL SELECT xmax::text FROM webhook_endpoints WHERE id = ?`,
      [owner.id, endpoint.id],
    );
    return rows.map((r) => r.xmax);
  };

  const note = (into: () => Seen[] | undefined) => (q: { sql: string; __knexTxId?: string }) => {
    if (counting) into()?.push({ sql: q.sql, txId: q.__knexTxId });
  };
  stack.db.on(
    'query',
    note(() => gatewaySeen[phase]),
  );
  workerDbOwn.on(
    'query',
    note(() => workerSeen),
  );
});

afterAll(async () => {
  await workers?.stop();
  await workerRun;
  await receiver?.stop();
  await workerDbOwn?.destroy();
  await stack?.close();
});

/** One QR payment: created with the key, paid by its signed callback, its webhook received, every workflow closed. */
async function paidPayment(): Promise<{ orderId: string; workflowIds: string[] }> {
  const app = stack.app.callback();
  const orderId = uniq('budget');
  phase = 'create';
  const created = await request(app)
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u', amount: 123.45, customerId: 'c' });
  phase = 'gatewayIdle';
  expect(created.status).toBe(200);
  const paymentId = created.body.body.paymentId as string;

  const body = signPayload(stack.config.callbacks.providers.QR.secret, {
    paymentId,
    status: 'success',
    amount: 123.45,
    orderId,
    timestamp: new Date().toISOString(),
  });
  phase = 'callback';
  const cb = await request(app).post('/qrcallback').set('Content-Type', 'application/json').send(JSON.stringify(body));
  await stack.app.idle(); // the receipt's finish, after the answer, is the callback's too
  phase = 'gatewayIdle';
  expect(cb.status).toBe(200);

  await waitFor(
    async () =>
      receiver.log.some((r) => (JSON.parse(r.body) as { data: { orderId: string } }).data.orderId === orderId),
    20_000,
    `webhook of ${orderId}`,
  );
  // the payment workflow and every workflow it started, closed
  const workflowIds: string[] = [];
  const queue = [paymentWorkflowIdOf(paymentId)];
  while (queue.length) {
    const id = queue.shift()!;
    workflowIds.push(id);
    const h = stack.client.workflow.getHandle(id);
    await h.result();
    const { events } = await h.fetchHistory();
    for (const e of events ?? []) {
      const child = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
      if (child) queue.push(child);
    }
  }
  return { orderId, workflowIds };
}

it('one paid QR payment costs exactly its budget of statements, transactions, events and workflow tasks', async () => {
  await paidPayment(); // warm-up: caches and prepared things of the first payment
  await new Promise((r) => setTimeout(r, 300));
  const shared0 = await sharedRows();
  counting = true;
  const { orderId, workflowIds } = await paidPayment();
  await new Promise((r) => setTimeout(r, 500)); // anything late still counts
  counting = false;
  const shared1 = await sharedRows();
  expect(shared1).toHaveLength(2);

  const postgres = {
    create: tally(gatewaySeen.create),
    callback: tally(gatewaySeen.callback),
    worker: tally(workerSeen),
    gatewayIdle: tally(gatewaySeen.gatewayIdle),
    sharedRowsLocked: shared1.filter((x, i) => x !== shared0[i]).length,
  };
  const temporal: Budget['temporal'] = {};
  for (const id of workflowIds) {
    const { events } = await stack.client.workflow.getHandle(id).fetchHistory();
    const name = id
      .replace(orderId, '<order>')
      .replace(/pay_[0-9a-f]{32}/, '<payment>')
      .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<uuid>');
    temporal[name] = {
      events: events?.length ?? 0,
      types: (events ?? []).map((e) => EVENT_TYPE[e.eventType ?? 0].replace('EVENT_TYPE_', '')),
      workflowTasks: (events ?? []).filter((e) => e.workflowTaskCompletedEventAttributes).length,
    };
  }
  // sizes: what Temporal stores of the payment (history events; the memo is also kept in the
  // execution's state, rewritten at every workflow task, and in its visibility row). Ceilings, not
  // exact: ids, timestamps and varints move a few bytes.
  const { events } = await stack.client.workflow.getHandle(workflowIds[0]).fetchHistory();
  const historyBytes = (events ?? []).reduce(
    (n, e) => n + proto.api.history.v1.HistoryEvent.encode(e).finish().length,
    0,
  );
  const memo = events![0].workflowExecutionStartedEventAttributes!.memo;
  const memoBytes = memo ? proto.api.common.v1.Memo.encode(memo).finish().length : 0;
  console.log(`one paid payment's history ${historyBytes} bytes, memo ${memoBytes} bytes`);
  expect(historyBytes).toBeLessThanOrEqual(BYTES.history);
  expect(memoBytes).toBeLessThanOrEqual(BYTES.memo);
  const seen = { postgres, temporal };
  measured = seen;
  if (JSON.stringify(seen) !== JSON.stringify(BUDGET)) console.log(JSON.stringify(seen, null, 1));
  expect(seen).toEqual(BUDGET);
});

it('the budget can fail: one statement more, one transaction more or one event more is not the budget', () => {
  expect(measured).toBeDefined();
  const more = (change: (b: Budget) => void) => {
    const b = structuredClone(measured!);
    change(b);
    return b;
  };
  expect(more(() => undefined)).toEqual(BUDGET);
  expect(more((b) => b.postgres.worker.statements.push('select payments'))).not.toEqual(BUDGET);
  expect(more((b) => b.postgres.create.transactions++)).not.toEqual(BUDGET);
  expect(more((b) => b.temporal['payment-<payment>'].events++)).not.toEqual(BUDGET);
});

it('counts a knex transaction as one, its BEGIN and COMMIT as statements, and labels by verb and tables', async () => {
  const seen: { sql: string; txId?: string }[] = [];
  const note = (q: { sql: string; __knexTxId?: string }) => seen.push({ sql: q.sql, txId: q.__knexTxId });
  workerDbOwn.on('query', note);
  try {
    await workerDbOwn.transaction(async (trx) => {
      await trx('payments').where({ id: 'none' }).first('id');
      await trx('payment_events').where({ payment_id: 'none' }).first('id');
    });
    await workerDbOwn('api_keys').where({ id: 'none' }).first('id');
  } finally {
    workerDbOwn.off('query', note);
  }
  const t = tally(seen);
  expect(t.transactions).toBe(2);
  expect(t.statements).toEqual(['begin;', 'select payments', 'select payment_events', 'commit;', 'select api_keys']);
});
