/**
 * Payload encryption: the codec (round trip, key rotation, pass-through of payloads written
 * without it, tampering), and a card payment's history holding no token, no user id in clear.
 */
import { createDecipheriv } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import request from 'supertest';
import { AesGcmCodec } from '../src/temporal/codec';
import { parseKeyRing } from '../src/key-ring';
import { loadConfig } from '../src/config';
import { uniq, waitFor } from './support/stack';
import { useTestStack } from './support/servers';
import { newKey } from './payments/support';

const K1 = `k1:${Buffer.alloc(32, 1).toString('base64')}`;
const K2 = `k2:${Buffer.alloc(32, 2).toString('hex')}`;

describe('AesGcmCodec', () => {
  const clear = defaultPayloadConverter.toPayload({ token: 'tok_secret_4242', userId: 'u-1' });

  it('encrypts with the first key (its id in the metadata) and decrypts', async () => {
    const codec = new AesGcmCodec(parseKeyRing(`${K1},${K2}`));
    const [sealed] = await codec.encode([clear]);
    expect(new TextDecoder().decode(sealed.metadata!['encryption-key-id'])).toBe('k1');
    expect(Buffer.from(sealed.data!).toString('latin1')).not.toContain('tok_secret');
    const [back] = await codec.decode([sealed]);
    expect(defaultPayloadConverter.fromPayload(back)).toEqual({ token: 'tok_secret_4242', userId: 'u-1' });
  });

  it('rotates: a ring with a new first key still reads what the old key wrote', async () => {
    const [old] = await new AesGcmCodec(parseKeyRing(K1)).encode([clear]);
    const rotated = new AesGcmCodec(parseKeyRing(`${K2},${K1}`));
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([old]))[0])).toMatchObject({
      token: 'tok_secret_4242',
    });
    await expect(new AesGcmCodec(parseKeyRing(K2)).decode([old])).rejects.toThrow(/k1/);
  });

  it('passes through payloads written without it (old histories), refuses tampered ones', async () => {
    const codec = new AesGcmCodec(parseKeyRing(K1));
    expect((await codec.decode([clear]))[0]).toBe(clear);
    const [sealed] = await codec.encode([clear]);
    sealed.data![20] ^= 1;
    await expect(codec.decode([sealed])).rejects.toThrow();
  });

  it('seals the payload as protobuf, and still reads what the JSON form (until 2026-12-01) sealed', async () => {
    const ring = parseKeyRing(K1);
    const codec = new AesGcmCodec(ring);
    const [sealed] = await codec.encode([clear]);
    // IV, tag and the protobuf Payload (metadata entry, data), nothing else: no base64 inside
    const protobufBytes = temporal.api.common.v1.Payload.encode(clear).finish().length;
    expect(sealed.data!.length).toBe(12 + protobufBytes + 16);
    // the JSON form, as the codec sealed it before (its plaintext is checked in the next test)
    const [old] = await new AesGcmCodec({ ...ring, seal: 'json' }).encode([clear]);
    expect(old.data!.length).toBeGreaterThan(sealed.data!.length * 1.2);
    for (const p of [sealed, old])
      expect(defaultPayloadConverter.fromPayload((await codec.decode([p]))[0])).toEqual({
        token: 'tok_secret_4242',
        userId: 'u-1',
      });
    // an empty payload round-trips too (protobuf writes no byte for it)
    const [empty] = await codec.decode(await codec.encode([{}]));
    expect(Buffer.from(empty.data ?? []).length).toBe(0);
  });

  it('with TEMPORAL_CODEC_SEAL=json seals the JSON form (for processes that read only it), read by both', async () => {
    const config = loadConfig({ TEMPORAL_CODEC_KEYS: K1, TEMPORAL_CODEC_SEAL: 'json' });
    const ring = config.temporal.codecKeys;
    const [sealed] = await new AesGcmCodec(ring).encode([clear]);
    const data = Buffer.from(sealed.data!);
    const decipher = createDecipheriv('aes-256-gcm', ring.keys.get('k1')!, data.subarray(0, 12));
    decipher.setAAD(Buffer.from('k1'));
    decipher.setAuthTag(data.subarray(data.length - 16));
    const plain = Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]);
    expect(JSON.parse(plain.toString('utf8'))).toEqual({
      m: { encoding: Buffer.from(clear.metadata!.encoding!).toString('base64') },
      d: Buffer.from(clear.data!).toString('base64'),
    });
    const protobufRing = loadConfig({ TEMPORAL_CODEC_KEYS: K1 }).temporal.codecKeys;
    expect(protobufRing.seal).toBe('protobuf');
    for (const reader of [ring, protobufRing])
      expect(defaultPayloadConverter.fromPayload((await new AesGcmCodec(reader).decode([sealed]))[0])).toEqual({
        token: 'tok_secret_4242',
        userId: 'u-1',
      });
    expect(() => loadConfig({ TEMPORAL_CODEC_KEYS: K1, TEMPORAL_CODEC_SEAL: 'xml' })).toThrow(/TEMPORAL_CODEC_SEAL/);
  });

  it('is required in production and checked', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/TEMPORAL_CODEC_KEYS/);
    expect(() => loadConfig({ TEMPORAL_CODEC_KEYS: 'k1:short' })).toThrow(
      /TEMPORAL_CODEC_KEYS: key k1 is not 32 bytes/,
    );
  });
});

describe('a card payment in Temporal', () => {
  const stack = useTestStack();

  it('its history holds no card token and no user id in clear; the search attributes stay readable', async () => {
    const orderId = uniq('ord');
    const token = `tok_test_${uniq('secret')}`;
    const res = await request(stack.app.callback())
      .post('/cardpayment')
      .type('form')
      .send({ orderId, userId: 'user-in-clear-check', amount: '250.50', token });
    expect(res.status).toBe(200);
    const row = await waitFor(
      () => stack.db('payments').where({ order_id: orderId }).whereNotNull('provider_ref').first(),
      20_000,
      'card charge',
    );
    const history = await stack.client.workflow.getHandle(row.workflow_id).fetchHistory();
    // every byte string of the history (payload data and metadata), as text
    const bytes: string[] = [];
    const walk = (v: unknown): void => {
      if (v instanceof Uint8Array) bytes.push(Buffer.from(v).toString('latin1'));
      else if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') Object.values(v).forEach(walk);
      else if (typeof v === 'string') bytes.push(v);
    };
    walk(history);
    const raw = bytes.join('\n');
    expect(raw).toContain('binary/encrypted');
    expect(raw).toContain('cardPaymentWorkflow');
    expect(raw).not.toContain(token);
    expect(raw).not.toContain('user-in-clear-check');
    const desc = await stack.client.workflow.getHandle(row.workflow_id).describe();
    expect(desc.searchAttributes.OrderId).toEqual([orderId]);
  });

  it('the codec endpoint decodes what the worker wrote, for Temporal Web (CORS) and for keys with the scope codec', async () => {
    const sealed = (
      await new AesGcmCodec(stack.config.temporal.codecKeys).encode([
        defaultPayloadConverter.toPayload({ orderId: 'ORD-1' }),
      ])
    )[0];
    const wire = {
      payloads: [
        {
          metadata: Object.fromEntries(
            Object.entries(sealed.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
          ),
          data: Buffer.from(sealed.data!).toString('base64'),
        },
      ],
    };
    const res = await request(stack.app.callback())
      .post('/codec/decode')
      .set('Origin', 'http://127.0.0.1:8233')
      .send(wire);
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('http://127.0.0.1:8233');
    expect(JSON.parse(Buffer.from(res.body.payloads[0].data, 'base64').toString())).toEqual({ orderId: 'ORD-1' });
    const back = await request(stack.app.callback())
      .post('/codec/encode')
      .set('Origin', 'http://127.0.0.1:8233')
      .send(res.body);
    expect(Buffer.from(back.body.payloads[0].metadata.encoding, 'base64').toString()).toBe('binary/encrypted');

    const pre = await request(stack.app.callback())
      .options('/codec/decode')
      .set('Origin', 'http://127.0.0.1:8233')
      .set('Access-Control-Request-Method', 'POST');
    expect(pre.status).toBe(204);
    expect(
      (
        await request(stack.app.callback())
          .options('/codec/decode')
          .set('Origin', 'https://evil.example')
          .set('Access-Control-Request-Method', 'POST')
      ).status,
    ).toBe(403);
    const { key } = await newKey(stack.db, { scopes: ['payments:read'] });
    expect(
      (await request(stack.app.callback()).post('/codec/decode').set('Authorization', `Bearer ${key}`).send(wire))
        .status,
    ).toBe(403);
    const codecKey = (await newKey(stack.db, { scopes: ['codec'] })).key;
    expect(
      (await request(stack.app.callback()).post('/codec/decode').set('Authorization', `Bearer ${codecKey}`).send(wire))
        .status,
    ).toBe(200);
    expect((await request(stack.app.callback()).post('/codec/decode').set('X-API-Key', 'nope').send(wire)).status).toBe(
      401,
    );
  });
});
