/**
 * Payload encryption (docs/operations.md): an AES-256-GCM PayloadCodec on the client and the
 * worker, so workflow inputs, results, signals, queries, memos and activity payloads are ciphertext
 * in Temporal. Key ring: src/key-ring.ts (the first key encrypts, all decrypt). A sealed payload:
 * metadata `encoding: binary/encrypted` and `encryption-key-id`; data = 12-byte IV, ciphertext,
 * 16-byte GCM tag, the key id authenticated too. The plaintext is Temporal's protobuf `Payload`
 * (JSON with base64 inside until 2026-12-01: still read, and written with TEMPORAL_CODEC_SEAL=json).
 * Payloads without that encoding pass through decode (old histories replay), except with
 * `requireEncrypted` (the production worker): then decode refuses them, so a start, signal or
 * update sent in clear by someone without the keys runs no workflow code. Search attributes stay
 * clear.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { KeyRing } from '../key-ring';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
const enc = new TextEncoder();
const dec = new TextDecoder();

const b64 = (u: Uint8Array | null | undefined) => Buffer.from(u ?? new Uint8Array()).toString('base64');
const fromB64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
const PayloadMessage = temporal.api.common.v1.Payload;
/** The first byte of the JSON form; a protobuf Payload starts with a field tag (0x0a, 0x12, 0x1a). */
const JSON_FORM = 0x7b; // '{'

const serialize = (p: Payload): Uint8Array => PayloadMessage.encode(p).finish();
/** The JSON form, written only with TEMPORAL_CODEC_SEAL=json (a rollout past readers of json alone). */
const serializeJson = (p: Payload): Uint8Array => {
  const metadata = Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)]));
  return Buffer.from(JSON.stringify({ m: metadata, d: b64(p.data) }));
};

/** A plain Uint8Array over the same bytes (protobufjs hands out Buffers). */
const view = (u: Uint8Array) => new Uint8Array(u.buffer, u.byteOffset, u.byteLength);

function deserialize(b: Buffer): Payload {
  if (b[0] !== JSON_FORM) {
    // a plain Payload, as the JSON form gives: not protobufjs' message (frozen defaults, Buffers)
    const m = PayloadMessage.decode(b);
    const metadata = Object.fromEntries(Object.entries(m.metadata ?? {}).map(([k, v]) => [k, view(v)]));
    return { metadata, data: view(m.data ?? new Uint8Array()) };
  }
  const o = JSON.parse(b.toString('utf8')) as { m: Record<string, string>; d: string };
  return { metadata: Object.fromEntries(Object.entries(o.m).map(([k, v]) => [k, fromB64(v)])), data: fromB64(o.d) };
}

export class AesGcmCodec implements PayloadCodec {
  constructor(
    private readonly ring: KeyRing,
    private readonly opts: { requireEncrypted?: boolean } = {},
  ) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const id = this.ring.current;
    const key = this.ring.keys.get(id)!;
    const seal = this.ring.seal === 'json' ? serializeJson : serialize;
    return payloads.map((p) => {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(id));
      const body = cipher.update(seal(p));
      const final = cipher.final();
      return {
        metadata: { encoding: enc.encode(ENCRYPTED_ENCODING), [KEY_ID]: enc.encode(id) },
        data: new Uint8Array(Buffer.concat([iv, body, final, cipher.getAuthTag()])),
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      const encoding = p.metadata?.encoding;
      if (!encoding || dec.decode(encoding) !== ENCRYPTED_ENCODING) {
        if (this.opts.requireEncrypted) throw new Error('payload not encrypted: refused (production worker)');
        return p; // written without the codec
      }
      const idBytes = p.metadata?.[KEY_ID];
      const id = idBytes ? dec.decode(idBytes) : '';
      const key = this.ring.keys.get(id);
      if (!key) throw new Error(`payload encrypted with key "${id}", which TEMPORAL_CODEC_KEYS does not hold`);
      const data = Buffer.from(p.data ?? new Uint8Array());
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
      decipher.setAAD(Buffer.from(id));
      decipher.setAuthTag(data.subarray(data.length - 16));
      return deserialize(Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]));
    });
  }
}

/** The data converter of the client and the worker: the default payload converter, then the codec. */
export const dataConverterOf = (ring: KeyRing, opts: { requireEncrypted?: boolean } = {}) => ({
  payloadCodecs: [new AesGcmCodec(ring, opts)],
});
