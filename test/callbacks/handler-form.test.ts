/** The handler form of the contract, as pure rules (the endpoints' tests drive them over HTTP). */
import { HANDLER_ERRORS, idsOf, unwrapHandlerBody, validateHandlerBody } from '../../src/domain/handler-form';

const event = { orderId: 'ORD-1', paymentId: 'pay_1', success: true, userId: 'u-1', amount: 12.5, message: 'ok' };

describe('unwrapping the body', () => {
  it.each([
    ['an object', event],
    ['a JSON string', JSON.stringify(event)],
    ['an envelope with an object body', { body: event, headers: {} }],
    ['an envelope with a JSON string body', { body: JSON.stringify(event) }],
    ['a JSON string of an envelope', JSON.stringify({ body: JSON.stringify(event) })],
  ])('accepts %s', (_name, input) => {
    const r = unwrapHandlerBody(input);
    expect(r).toMatchObject({ ok: true, body: event });
  });

  it.each([
    ['a number', 42, 'Unsupported request body type: number'],
    ['an array', [event], 'Unsupported request body type: array'],
    ['null', null, 'Unsupported request body type: null'],
    ['a string that is not JSON', 'orderId=1', 'Request body is a string that is not valid JSON'],
    ['an envelope with a numeric body', { body: 7 }, 'Unsupported body type: number'],
    ['an envelope with a null body', { body: null }, 'Unsupported body type: null'],
    ['an envelope with an array body', { body: [] }, 'Unsupported body type: array'],
    ['an envelope with a non-JSON string body', { body: '{oops' }, 'body is a string that is not valid JSON'],
  ])('rejects %s', (_name, input, error) => {
    expect(unwrapHandlerBody(input)).toMatchObject({ ok: false, error });
  });
});

describe('validating the event', () => {
  const without = (k: string) => Object.fromEntries(Object.entries(event).filter(([key]) => key !== k));

  it.each([
    ['orderId missing', without('orderId'), HANDLER_ERRORS.orderId],
    ['orderId empty', { ...event, orderId: '' }, HANDLER_ERRORS.orderId],
    ['paymentId missing', without('paymentId'), HANDLER_ERRORS.paymentId],
    ['paymentId null', { ...event, paymentId: null }, HANDLER_ERRORS.paymentId],
    ['success missing', without('success'), HANDLER_ERRORS.success],
    ['success null', { ...event, success: null }, HANDLER_ERRORS.success],
    ['userId missing', without('userId'), HANDLER_ERRORS.userId],
    ['userId empty', { ...event, userId: '' }, HANDLER_ERRORS.userId],
  ])('%s gives the text of the contract', (_name, body, error) => {
    expect(validateHandlerBody(body)).toEqual({ ok: false, error, missing: true });
  });

  it('reports the first failing rule in the contract order', () => {
    expect(validateHandlerBody({})).toMatchObject({ error: 'orderId is required in body' });
    expect(validateHandlerBody({ orderId: 'o' })).toMatchObject({ error: 'paymentId is required in body' });
    expect(validateHandlerBody({ orderId: 'o', paymentId: 'p' })).toMatchObject({
      error: 'success is required in body',
    });
    expect(validateHandlerBody({ orderId: 'o', paymentId: 'p', success: false })).toMatchObject({
      error: 'userId is required in body',
    });
  });

  it('accepts the aliases order_id, payment_id and user_id', () => {
    const r = validateHandlerBody({ order_id: 'ORD-9', payment_id: 'pay_9', success: false, user_id: 'u-9' });
    expect(r).toEqual({
      ok: true,
      value: {
        orderId: 'ORD-9',
        paymentId: 'pay_9',
        success: false,
        succeeded: false,
        userId: 'u-9',
        amount: 0,
        amountSatang: 0,
        message: '',
      },
    });
  });

  it('an empty paymentId is not null, so it passes (the contract: must not be null)', () => {
    expect(validateHandlerBody({ ...event, paymentId: '' })).toMatchObject({ ok: true, value: { paymentId: '' } });
  });

  it.each([true, 'true', 1, false, 'false', {}])('only boolean true counts as success (%p)', (success) => {
    const r = validateHandlerBody({ ...event, success });
    expect(r).toMatchObject({ ok: true, value: { success, succeeded: success === true } });
  });

  it('amount defaults to 0 and message to the empty string; a given amount is kept in satang', () => {
    expect(validateHandlerBody(without('amount'))).toMatchObject({ ok: true, value: { amount: 0, amountSatang: 0 } });
    expect(validateHandlerBody(without('message'))).toMatchObject({ ok: true, value: { message: '' } });
    expect(validateHandlerBody(event)).toMatchObject({ ok: true, value: { amount: 12.5, amountSatang: 1250 } });
  });

  it.each([
    [{ amount: '12.50' }, 'amount must be a number'],
    [{ amount: 1.234 }, 'amount must be a THB amount of at least 0 with at most 2 decimals, up to 1,000,000'],
    [{ amount: -1 }, 'amount must be a THB amount of at least 0 with at most 2 decimals, up to 1,000,000'],
    [{ message: 5 }, 'message must be a string'],
    [{ orderId: 123 }, 'orderId must be a string of at most 256 characters'],
  ])('rejects %p', (patch, error) => {
    expect(validateHandlerBody({ ...event, ...patch })).toEqual({ ok: false, error, missing: false });
  });

  it('finds the ids of a body for the error log, also when it does not validate', () => {
    expect(idsOf({ order_id: 'ORD-2', payment_id: 'pay_2' })).toEqual({ orderId: 'ORD-2', paymentId: 'pay_2' });
    expect(idsOf({ orderId: '', paymentId: null })).toEqual({ orderId: null, paymentId: null });
    expect(idsOf('nope')).toEqual({ orderId: null, paymentId: null });
  });
});
