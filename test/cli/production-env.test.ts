/**
 * The production environment docs/deploy.md documents ("Required (the process exits 78 naming
 * each missing one)") is exactly what the configuration requires in production: with every
 * documented variable it loads; without any one of them it refuses, naming it; a role started
 * without one exits 78.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, PROVIDERS } from '../../src/config';
import { ROOT, start } from './support';

/** The variables of the "Required" paragraph, `<NAME>` expanded; parenthesised remarks left out. */
function documentedRequired(): string[] {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'deploy.md'), 'utf8');
  const m = /^Required \(the process exits 78 naming each missing one\):([\s\S]*?)For live traffic:/m.exec(doc);
  if (!m) throw new Error('docs/deploy.md has no "Required (the process exits 78 ...)" paragraph');
  let text = m[1];
  while (/\([^()]*\)/.test(text)) text = text.replace(/\([^()]*\)/g, '');
  const names = [...text.matchAll(/`([A-Z][A-Z0-9_<>]*)(=[^`]*)?`/g)].map((x) => x[1]);
  return names.flatMap((n) => (n.includes('<NAME>') ? PROVIDERS.map((p) => n.replace('<NAME>', p)) : [n]));
}

/** A valid production value of each documented variable. */
const VALUES: Record<string, string> = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://talat:secret@db:5432/talat',
  TEMPORAL_ADDRESS: 'temporal:7233',
  WEBHOOK_SECRET_KEY: 'a'.repeat(64),
  STOREFRONT_KEY_SECRET: 's'.repeat(32),
  IDENTITY_SECRET: 'i'.repeat(32),
  RESULT_SIGNING_KEY: 'r'.repeat(32),
  TEMPORAL_CODEC_KEYS: `k1:${'c'.repeat(64)}`,
  ...Object.fromEntries(
    PROVIDERS.flatMap((p) => [
      [`PROVIDER_SECRET_${p}`, `${p.toLowerCase()}-secret-0123456789`],
      [`PROVIDER_IPS_${p}`, '10.0.0.0/8'],
    ]),
  ),
};

const documented = documentedRequired();
const env = () => Object.fromEntries(documented.map((n) => [n, VALUES[n]]));

it('the documented list is read: NODE_ENV, the services, the codec keys and every provider', () => {
  expect(documented).toEqual(
    expect.arrayContaining(['NODE_ENV', 'DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_CODEC_KEYS']),
  );
  for (const n of documented) expect({ n, value: VALUES[n] }).toEqual({ n, value: expect.any(String) });
});

it('the documented variables are enough: production loads with them and nothing else', () => {
  expect(loadConfig(env()).production).toBe(true);
  // and its /metrics answers only a key with the scope metrics, unless METRICS_ACCESS=public
  expect(loadConfig(env()).metricsNeedKey).toBe(true);
  expect(loadConfig({ ...env(), METRICS_ACCESS: 'public' }).metricsNeedKey).toBe(false);
});

it.each(documented.filter((n) => n !== 'NODE_ENV'))('production without %s is refused, naming it', (name) => {
  const without = env();
  delete without[name];
  let issues: string[] = [];
  try {
    loadConfig(without);
  } catch (e) {
    issues = (e as ConfigError).issues;
  }
  expect(issues.map((i) => i.split(':')[0])).toEqual([name]);
});

it('a role started without DATABASE_URL, or with a bad setting, exits 78 naming it', async () => {
  const without = env();
  delete without.DATABASE_URL;
  const [missing, bad] = await Promise.all([
    start('npm', ['run', 'gateway'], without).done,
    start('npm', ['run', 'gateway'], { ...env(), PORT: 'abc' }).done,
  ]);
  expect(missing).toMatchObject({ code: 78, stderr: expect.stringContaining('DATABASE_URL: required in production') });
  expect(bad).toMatchObject({ code: 78, stderr: expect.stringContaining('PORT: Expected number') });
});
