/**
 * The payload codec's key ring: TEMPORAL_CODEC_KEYS = `<id>:<32 bytes as base64 or 64 hex
 * digits>[,<id>:<key>...]`; the first key encrypts, all decrypt, so a key rotates by putting a new
 * one first. Required in production; elsewhere the data directory's generated ring (src/stack/keys.ts).
 * Parsed with the configuration; the codec (src/temporal/codec.ts) only reads it.
 */
export interface KeyRing {
  current: string;
  keys: ReadonlyMap<string, Buffer>;
  /** what the codec seals (TEMPORAL_CODEC_SEAL): protobuf (the default), or json for older readers */
  seal?: 'protobuf' | 'json';
}

/** Parses TEMPORAL_CODEC_KEYS; throws with a message naming what is wrong. */
export function parseKeyRing(text: string): KeyRing {
  const keys = new Map<string, Buffer>();
  let current: string | undefined;
  for (const entry of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z0-9._-]{1,64}):(.+)$/.exec(entry);
    if (!m) throw new Error(`"${entry.split(':')[0]}:…" is not <id>:<key>`);
    const [, id, material] = m;
    const key = /^[0-9a-fA-F]{64}$/.test(material) ? Buffer.from(material, 'hex') : Buffer.from(material, 'base64');
    if (key.length !== 32) throw new Error(`key ${id} is not 32 bytes (base64 or 64 hex digits)`);
    if (keys.has(id)) throw new Error(`key id ${id} appears twice`);
    keys.set(id, key);
    current ??= id;
  }
  if (!current) throw new Error('no key');
  return { current, keys };
}
