/**
 * The development keys of a data directory: outside production every signing, identity and
 * codec key left unset is generated once per DATA_DIR into `DATA_DIR/keys.env` (0600, NAME=value
 * lines, shell-readable) and reused by every process on it (`npm start`, the roles, `talat`), as
 * the Postgres password is. No key is a published constant; production requires them all.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PROVIDER_NAMES } from '../domain/providers';

/** The generated variables and how each is made. */
const GENERATED: Record<string, () => string> = {
  RESULT_SIGNING_KEY: () => randomBytes(32).toString('base64url'),
  TEMPORAL_CODEC_KEYS: () => `gen-${randomBytes(4).toString('hex')}:${randomBytes(32).toString('base64')}`,
  WEBHOOK_SECRET_KEY: () => randomBytes(32).toString('base64'),
  STOREFRONT_KEY_SECRET: () => randomBytes(32).toString('base64url'),
  IDENTITY_SECRET: () => randomBytes(32).toString('base64url'),
  ...Object.fromEntries(
    PROVIDER_NAMES.map((p) => [`PROVIDER_SECRET_${p}`, () => randomBytes(24).toString('base64url')]),
  ),
};
export const GENERATED_KEY_VARS = Object.keys(GENERATED);

export const keysFileOf = (dataDir: string): string => path.join(path.resolve(dataDir), 'keys.env');

const parse = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l.trim()))
      .filter((m): m is RegExpExecArray => !!m)
      .map((m) => [m[1], m[2]]),
  );

/**
 * The data directory's keys, generated (and written 0600) the first time; a file that lacks a
 * variable of a newer version gets it added. Concurrent first starts agree: the file is created
 * by an atomic link, the loser reads the winner's.
 */
export function generatedKeysOf(dataDir: string): Record<string, string> {
  const file = keysFileOf(dataDir);
  const read = () => (fs.existsSync(file) ? parse(fs.readFileSync(file, 'utf8')) : undefined);
  const have = read();
  if (have && GENERATED_KEY_VARS.every((v) => have[v])) return have;
  const keys = { ...Object.fromEntries(GENERATED_KEY_VARS.map((v) => [v, GENERATED[v]()])), ...have };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  const text = `# generated development keys of this data directory (never use them in production)\n${Object.entries(
    keys,
  )
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')}\n`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  try {
    if (have) fs.renameSync(tmp, file);
    else fs.linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return read()!;
}
