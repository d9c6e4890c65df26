/** Recorded histories for the replay fixtures: their payloads decrypted, as Temporal Web's codec endpoint shows them. */
import type { KeyRing } from '../../src/key-ring';
import { AesGcmCodec, ENCRYPTED_ENCODING } from '../../src/temporal/codec';

/**
 * The history with its payloads decrypted (the payload codec of src/temporal/codec.ts encrypts
 * them; a replay worker has no codec), as Temporal Web's codec endpoint would show them.
 */
export async function decrypted(node: unknown, keys: KeyRing): Promise<unknown> {
  if (Array.isArray(node)) return Promise.all(node.map((n) => decrypted(n, keys)));
  if (!node || typeof node !== 'object') return node;
  const o = node as Record<string, unknown>;
  const meta = o.metadata as Record<string, string> | undefined;
  if (meta?.encoding && Buffer.from(meta.encoding, 'base64').toString() === ENCRYPTED_ENCODING) {
    const payload = {
      metadata: Object.fromEntries(Object.entries(meta).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
      data: Buffer.from(String(o.data ?? ''), 'base64'),
    };
    const [clear] = await new AesGcmCodec(keys).decode([payload]);
    return {
      metadata: Object.fromEntries(
        Object.entries(clear.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v as Uint8Array).toString('base64')]),
      ),
      data: Buffer.from(clear.data ?? new Uint8Array()).toString('base64'),
    };
  }
  return Object.fromEntries(await Promise.all(Object.entries(o).map(async ([k, v]) => [k, await decrypted(v, keys)])));
}
