/**
 * No published keys (issue 38): outside production every signing, identity and codec key is
 * generated once per data directory (DATA_DIR/keys.env, 0600) and reused; no key of the old
 * documented constants is left anywhere in the source or the docs; production refuses defaults.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadConfig } from '../../src/config';

const ROOT = path.resolve(__dirname, '../..');
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'talat-keys-'));
const keysOf = (dataDir: string) => {
  const c = loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir });
  return {
    result: c.results.signingKey,
    codec: [...c.temporal.codecKeys.keys.values()].map((k) => k.toString('hex')).join(','),
    webhook: c.webhooks.secretKey.toString('hex'),
    storefront: c.storefront.keySecret,
    identity: c.identity.secret,
    providers: Object.values(c.callbacks.providers).map((p) => p.secret),
  };
};

/** The keys `npm start` signed with before issue 38 (as their hashes would do too; kept verbatim to be refused). */
const PUBLISHED = [
  'talat-dev-result-signing-key',
  'dGFsYXQtZGV2',
  'talat-dev-identity-secret',
  'talat-dev-storefront-key-secret',
  'talat-dev-secret-',
];

it('each data directory gets keys of its own, kept 0600 and reused by the next start', () => {
  const a = tmp();
  const b = tmp();
  const first = keysOf(a);
  expect(keysOf(a)).toEqual(first);
  const other = keysOf(b);
  for (const k of ['result', 'codec', 'webhook', 'storefront', 'identity'] as const)
    expect(other[k]).not.toBe(first[k]);
  for (const v of Object.values(first).flat()) for (const p of PUBLISHED) expect(v).not.toContain(p);
  const file = path.join(a, 'keys.env');
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
});

it('a key given in the environment wins over the generated one', () => {
  const c = loadConfig({ NODE_ENV: 'development', DATA_DIR: tmp(), RESULT_SIGNING_KEY: 'x'.repeat(40) });
  expect(c.results.signingKey).toBe('x'.repeat(40));
});

it('production generates nothing and still refuses to start without its keys', () => {
  const dir = tmp();
  expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: dir })).toThrow(/RESULT_SIGNING_KEY: required/);
  expect(fs.existsSync(path.join(dir, 'keys.env'))).toBe(false);
});

it('no published development key is left in the source, the CLI, the tests or the docs', () => {
  const files = execFileSync(
    'git',
    ['ls-files', 'src', 'activities', 'workflows', 'docs', 'README.md', 'bench', 'test'],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  )
    .split('\n')
    .filter((f) => f && f !== 'test/security/published-keys.test.ts' && fs.existsSync(path.join(ROOT, f)));
  const hits = files.filter((f) => {
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
    return PUBLISHED.some((p) => text.includes(p));
  });
  expect(hits).toEqual([]);
});
