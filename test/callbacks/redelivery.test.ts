/**
 * The redelivery (src/callbacks/redelivery.ts): a callback answered before its signal, whose
 * gateway died right after the answer, is delivered by another gateway once the lease has passed:
 * once, however many gateways look, with the answer the provider had; handler-form receipts
 * (answered only after their finish) are left to their provider's retry.
 */
import { createApp, type GatewayApp } from '../../src/app/app';
import { useTestStack } from '../support/servers';
import { cardPayment, headerSigned, post, receiptsOf, resultOf, signalsOf, waitFor } from './helpers';
import { testLogger, uniq } from '../support/stack';

const stack = useTestStack();

const gateway = (redeliveryMs: number): GatewayApp =>
  createApp({
    config: { ...stack.config, callbacks: { ...stack.config.callbacks, redeliveryMs } },
    db: stack.db,
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
    logger: testLogger,
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const age = (id: string) =>
  stack
    .db('callback_receipts')
    .where({ id })
    .update({ created_at: stack.db.raw("now() - interval '1 hour'") });

it('a gateway that died after its answer: another delivers the receipt after the lease, once, with the answer given', async () => {
  const p = await cardPayment(stack, { callback: 'https://shop.example/back' });
  const sent = headerSigned(stack.config, 'CARD', 'form', {
    objectId: p.providerRef,
    token: 'tok_test_visa',
    status: 'true',
    message: 'approved',
    saveCard: 'false',
  });
  // the gateway dies right after its answer: its signal and finish never run
  const dead = gateway(60_000);
  dead.afterAnswer.run = () => undefined;
  const answered = await post(dead, '/callback', sent);
  expect(answered.status).toBe(303);
  const [receipt] = await receiptsOf(stack, p.paymentId);
  expect(receipt).toMatchObject({ outcome: null, reference: p.providerRef, message: 'approved' });

  const gateways = [gateway(100), gateway(100)];
  try {
    await sleep(500); // within the lease: nobody takes it
    expect((await receiptsOf(stack, p.paymentId))[0]).toMatchObject({ outcome: null });
    expect(await signalsOf(stack, p.workflowId)).toBe(0);

    await age(receipt.id);
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
    await waitFor(async () => (await receiptsOf(stack, p.paymentId))[0].outcome === 'signalled');
  } finally {
    await Promise.all(gateways.map((g) => g.stop()));
  }
  expect(await receiptsOf(stack, p.paymentId)).toEqual([
    expect.objectContaining({
      id: receipt.id,
      outcome: 'signalled',
      response_status: 303,
      response_location: answered.headers.location,
    }),
  ]);
  expect(await signalsOf(stack, p.workflowId)).toBe(1);
  const retry = await post(stack.app, '/callback', sent);
  expect([retry.status, retry.headers.location, retry.text]).toEqual([
    answered.status,
    answered.headers.location,
    answered.text,
  ]);
});

it('a handler-form receipt left unfinished is not redelivered: its provider was not answered and retries', async () => {
  const p = await cardPayment(stack);
  const id = uniq('evt');
  await stack.db('callback_receipts').insert({
    id,
    provider: 'cardnet',
    payment_id: p.paymentId,
    order_id: p.orderId,
    status: 'success',
    source_ip: '127.0.0.1',
    request: '{}',
    created_at: stack.db.raw("now() - interval '1 hour'"),
  });
  const g = gateway(100);
  try {
    await sleep(500);
  } finally {
    await g.stop();
  }
  expect(await receiptsOf(stack, p.paymentId)).toEqual([expect.objectContaining({ id, outcome: null })]);
  expect(await signalsOf(stack, p.workflowId)).toBe(0);
});
