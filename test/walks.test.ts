/**
 * The walks of docs/architecture.md, measured: which project files run for one real request, by
 * V8 precise coverage of this process, each request after a warm-up one of its kind (start-up code
 * excluded), each measured twice (a file counts when it ran both times). Workflow code runs in the
 * worker's threads and is not seen. `WALKS_WRITE_DOC=1 npx jest test/walks.test.ts` rewrites the doc.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { createQueueWorkers, type QueueWorkers } from '../src/app/worker';
import { paymentWorkflowIdOf } from '../src/payments';
import { installTemporalRuntime } from '../src/temporal/runtime';
import { fieldSigned, post } from './callbacks/helpers';
import { newKey, rowOf } from './payments/support';
import { startFileCoverage, type FileCoverage } from './support/coverage';
import { featureOf, featuresIn } from './support/slices';
import { createTestStack, testLogger, uniq, waitFor, type TestStack } from './support/stack';

const root = path.resolve(__dirname, '..');
const DOC = path.join(root, 'docs/architecture.md');
const features = featuresIn(root);

/** Files that run on their own schedule, request or not: left out of every walk. */
const BACKGROUND: Record<string, string> = {
  'src/temporal/runtime.ts': "the sink of the Temporal core's log lines: it runs whenever the core logs",
};

type Kind = 'feature' | 'shared' | 'sandbox';
export const kindOf = (file: string): Kind =>
  /^src\/simulators\//.test(file) ? 'sandbox' : featureOf(file, features) ? 'feature' : 'shared';

const WALKS = {
  qrGateway: 'QR callback, gateway: the route to the signal',
  qrWorker: 'QR callback, worker: the signal to the payments row',
  qr: 'QR callback, both sides',
  refund: 'Refund: `POST /refund` to the provider call',
} as const;
type Walk = keyof typeof WALKS;

/** The doc's block for `measured`: a table of counts, then each walk's feature files. */
export function render(measured: Record<Walk, string[]>): string {
  const count = (w: Walk, k: Kind) => measured[w].filter((f) => kindOf(f) === k).length;
  const keys = Object.keys(WALKS) as Walk[];
  return [
    '| Walk | feature files | shared infrastructure files | sandbox provider files |',
    '| --- | ---: | ---: | ---: |',
    ...keys.map((w) => `| ${WALKS[w]} | ${count(w, 'feature')} | ${count(w, 'shared')} | ${count(w, 'sandbox')} |`),
    '',
    'Feature files, by walk:',
    '',
    ...keys.map(
      (w) =>
        `- ${WALKS[w]}: ${measured[w]
          .filter((f) => kindOf(f) === 'feature')
          .map((f) => `\`${f}\``)
          .join(', ')}`,
    ),
  ].join('\n');
}

const START = '<!-- walks: written by test/walks.test.ts -->';
const END = '<!-- /walks -->';
/** The measured block of a doc, or undefined. */
export const blockOf = (doc: string) => doc.split(START)[1]?.split(END)[0]?.trim();
export const withBlock = (doc: string, block: string) =>
  `${doc.split(START)[0]}${START}\n${block}\n${END}${doc.split(END)[1] ?? ''}`;

let stack: TestStack;
let key: string;
let coverage: FileCoverage;
let workers: QueueWorkers | undefined;

/** The workers of the stack's queues, created (start-up) but not yet polling. */
const createWorkers = async () => {
  workers = await createQueueWorkers({
    address: process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
    namespace: 'default',
    paymentsQueue: stack.taskQueue,
    queues: ['payments', 'webhooks', 'background'],
    activities: stack.activities,
    workflowBundle: { codePath: process.env.TALAT_TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1 second',
    codecKeys: stack.config.temporal.codecKeys,
  });
};
const runWorkers = () => void workers!.run().catch(() => undefined);
const startWorkers = async () => {
  await createWorkers();
  runWorkers();
};
const stopWorkers = async () => {
  await workers?.stop();
  workers = undefined;
};

const api = () => request(stack.app.callback());
type Pending = { orderId: string; paymentId: string; amount: number };
/** A pending QR payment whose workflow is started (a delayed start: its first task comes with the callback). */
async function pendingQr(amount: number): Promise<Pending> {
  const orderId = uniq('walk');
  const res = await api()
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u', amount, customerId: 'c' });
  expect(res.status).toBe(200);
  const handle = stack.client.workflow.getHandle(paymentWorkflowIdOf(res.body.body.paymentId as string));
  await handle.describe();
  return { orderId, paymentId: res.body.body.paymentId as string, amount };
}
const callback = async (p: Pending) => {
  const payload = { paymentId: p.paymentId, status: 'success', amount: p.amount, orderId: p.orderId };
  const res = await post(stack.app, '/qrcallback', fieldSigned(stack.config, 'QR', payload));
  expect(res.status).toBe(200);
  // the signal and the receipt's finish follow the answer (the finish in a batch): inside this walk, not the next
  await stack.app.idle();
};
const paid = (orderId: string) =>
  waitFor(async () => ((await rowOf(stack.db, orderId))?.status === 'paid' ? true : undefined), 20_000, 'paid');
const refund = async (orderId: string) => {
  const res = await api().post('/refund').set('X-API-Key', key).send({ orderId, amount: 10 });
  expect(res.status).toBe(200);
  expect(res.body.body.status).toBe('succeeded');
};
/** The project files with a function called during `fn`, background files aside. */
async function during(fn: () => Promise<unknown>): Promise<string[]> {
  await coverage.take();
  await fn();
  return (await coverage.take()).filter((f) => !BACKGROUND[f]);
}
const both = (a: string[], b: string[]) => a.filter((f) => b.includes(f));

/** One round: the QR callback's two sides, and a refund, each after a warm-up of its kind. */
async function round(): Promise<Record<Walk, string[]>> {
  await startWorkers();
  const warm = await pendingQr(101);
  await callback(warm);
  await paid(warm.orderId);
  await refund(warm.orderId);
  const p = await pendingQr(102);
  await stopWorkers(); // the signal waits in Temporal until the next worker takes it
  const qrGateway = await during(() => callback(p));
  await createWorkers();
  const qrWorker = await during(async () => {
    runWorkers();
    await paid(p.orderId);
  });
  const r = await pendingQr(103);
  await callback(r);
  await paid(r.orderId);
  const refunded = await during(() => refund(r.orderId));
  await stopWorkers();
  const qr = [...new Set([...qrGateway, ...qrWorker])].sort();
  return { qrGateway, qrWorker, qr, refund: refunded };
}

let measured: Record<Walk, string[]>;
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  installTemporalRuntime(testLogger, 'WARN');
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
  coverage = await startFileCoverage(root);
  const [a, b] = [await round(), await round()];
  measured = Object.fromEntries((Object.keys(WALKS) as Walk[]).map((w) => [w, both(a[w], b[w])])) as typeof a;
  console.log(`measured walks:\n${JSON.stringify(measured, null, 1)}`);
}, 180_000);
afterAll(async () => {
  await stopWorkers();
  await coverage?.stop();
  await stack?.close();
});

describe('the walks, measured', () => {
  it('sees the files each side runs (the measure can fail)', () => {
    expect(measured.qrGateway).toEqual(expect.arrayContaining(['src/callbacks/routes.ts', 'src/app/app.ts']));
    expect(measured.qrWorker).toEqual(expect.arrayContaining(['src/payments/repository.ts']));
    expect(measured.qrWorker).not.toContain('src/callbacks/routes.ts');
    expect(measured.refund).toEqual(expect.arrayContaining(['src/refunds/service.ts', 'activities/refunds.ts']));
    expect(measured.refund).toEqual(expect.arrayContaining([expect.stringMatching(/^src\/simulators\//)]));
  });

  it('docs/architecture.md carries the measured counts and files', () => {
    const doc = fs.readFileSync(DOC, 'utf8');
    if (process.env.WALKS_WRITE_DOC === '1') fs.writeFileSync(DOC, withBlock(doc, render(measured)));
    expect(blockOf(fs.readFileSync(DOC, 'utf8'))).toEqual(render(measured));
  });

  it('the doc check fails on a count or a file the measure does not give', () => {
    const doc = withBlock('# A\n\nbefore\n\nafter\n', render(measured));
    expect(blockOf(doc)).toEqual(render(measured));
    const more = { ...measured, qr: [...measured.qr, 'src/orders/service.ts'] };
    expect(blockOf(doc)).not.toEqual(render(more));
    expect(kindOf('src/http/errors.ts')).toBe('shared');
    expect(kindOf('activities/payments/index.ts')).toBe('feature');
    expect(kindOf('src/simulators/bank.ts')).toBe('sandbox');
  });

  // At most 10 feature files from the route to the row and the signal (15 before the verify
  // helpers, the storefront's CORS test and the payments face were each made one file; 8 before
  // the webhook's planning became one statement, which builds the body first; 9 before the
  // delayed start: the gateway delivers by signal-with-start of the payment's own start, built in
  // src/payments/workflow-client.ts, and saves a workflow task and a timer per payment).
  it('the QR callback runs at most 10 feature files, both sides together', () => {
    expect(measured.qr.filter((f) => kindOf(f) === 'feature').length).toBeLessThanOrEqual(10);
  });
});
