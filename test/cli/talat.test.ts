/**
 * `talat` in development (bin/talat through tsx), spawned as typed: --help of every command,
 * apikey, promptpay, migrate, seed and their npm aliases, exit codes (0, 1 failure, 2 usage,
 * 78 configuration) with the message on stderr, --json, and `npx knex migrate:list`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { createDatabaseIfMissing } from '../../src/stack/postgres';
import { migrationSource } from '../../src/db/knex';
import { createApp } from '../../src/app/app';
import { revocationFeed } from '../../src/http/middleware/key-revocations';
import { createApiKey } from '../../src/http/middleware/api-key';
import {
  afterRevocationNotice,
  createTestStack,
  testConfig,
  testDatabaseUrl,
  testLogger,
  uniq,
  type TestStack,
} from '../support/stack';
import { ROOT, start, talat } from './support';

jest.setTimeout(180_000);

let stack: TestStack;
let db: Record<string, string>;
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  db = { DATABASE_URL: testDatabaseUrl(`talat_test_w${process.env.JEST_WORKER_ID ?? '1'}`) };
});
afterAll(() => stack?.close());

const COMMANDS = [
  ['apikey', 'create'],
  ['apikey', 'list'],
  ['apikey', 'revoke'],
  ['apikey', 'link'],
  ['promptpay'],
  ['migrate'],
  ['seed'],
  ['webhooks', 'endpoints', 'list'],
  ['webhooks', 'endpoints', 'create'],
  ['webhooks', 'endpoints', 'rotate'],
  ['listen'],
  ['trigger'],
  ['replay'],
];

describe('talat --help', () => {
  it('lists every command; each has --help with --json; exit 0', async () => {
    const top = await talat(['--help']);
    expect(top).toMatchObject({ code: 0, stderr: '' });
    for (const c of ['apikey', 'promptpay', 'migrate', 'seed', 'webhooks', 'listen', 'trigger', 'replay'])
      expect(top.stdout).toMatch(new RegExp(`^  ${c}\\b`, 'm'));
    const helps = await Promise.all(COMMANDS.map((c) => talat([...c, '--help'])));
    helps.forEach((h, i) => {
      expect({ command: COMMANDS[i].join(' '), code: h.code }).toEqual({ command: COMMANDS[i].join(' '), code: 0 });
      expect(h.stdout).toContain(`Usage: talat ${COMMANDS[i].join(' ')}`);
      expect(h.stdout).toContain('--json');
    });
  });

  it('no command, an unknown command or option, a missing argument: exit 2 with the reason on stderr', async () => {
    const [none, unknown, option, missing] = await Promise.all([
      talat([]),
      talat(['nope']),
      talat(['promptpay', '--nope', 'x']),
      talat(['apikey', 'revoke']),
    ]);
    expect(none).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('Usage: talat') });
    expect(unknown).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining("unknown command 'nope'") });
    expect(option).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown option '--nope'") });
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining("missing required argument 'id'") });
  });
});

describe('talat apikey', () => {
  it('create, list and revoke, as text and --json; the key works until revoked', async () => {
    const name = uniq('cli');
    const created = await talat(['apikey', 'create', '--name', name, '--scopes', 'payments:read', '--sandbox'], db);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const key = created.stdout.trim().split('\n').at(-1)!;
    expect(key).toMatch(/^tk_test_[A-Za-z0-9_-]{40}$/);

    const asJson = await talat(['apikey', 'create', '--name', name, '--scopes', 'payments:read', '--json'], db);
    expect(asJson.code).toBe(0);
    const k = JSON.parse(asJson.stdout) as { id: string; key: string; mode: string; scopes: string[] };
    expect(k).toMatchObject({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^tk_live_/),
      mode: 'live',
    });

    const listed = await talat(['apikey', 'list', '--json'], db);
    expect(listed.code).toBe(0);
    const keys = JSON.parse(listed.stdout) as { id: string; revokedAt: string | null }[];
    expect(keys.find((x) => x.id === k.id)).toMatchObject({ revokedAt: null });
    expect(listed.stdout).not.toContain(k.key);

    const res = () =>
      request(stack.app.callback())
        .get(`/checkstatus/${uniq('none')}`)
        .set('X-API-Key', k.key);
    expect((await res()).status).toBe(404);
    const revoked = await talat(['apikey', 'revoke', k.id], db);
    expect(revoked).toEqual({ code: 0, stdout: `revoked ${k.id}\n`, stderr: '' });
    expect((await res()).status).toBe(401);
    const text = await talat(['apikey', 'list'], db);
    expect(text.stdout.split('\n').find((l) => l.startsWith(k.id))).toMatch(/revoked \d{4}-/);
  });

  /** a gateway that caches key lookups for a minute, listening to the revocation feed */
  const cachingGateway = async () => {
    const app = createApp({
      config: testConfig({ API_KEY_CACHE_MS: '60000' }),
      db: stack.db,
      temporal: { client: stack.client, taskQueue: stack.taskQueue },
      logger: testLogger,
    });
    await revocationFeed(stack.db).ready();
    return app;
  };
  /**
   * Runs a CLI command that notifies the gateways, then waits for its notice to reach this
   * process (the generation moves on): the next request may not overtake it. The wait is bounded.
   */
  const noticed = async <T>(command: () => Promise<T>): Promise<T> => {
    const { result, ms } = await afterRevocationNotice(stack.db, command);
    expect(ms).toBeLessThan(1000);
    return result;
  };

  it('revoke takes effect at once on a gateway that caches key lookups for a minute', async () => {
    const cached = await cachingGateway();
    const made = await talat(['apikey', 'create', '--name', uniq('rv'), '--scopes', 'payments:read', '--json'], db);
    const k = JSON.parse(made.stdout) as { id: string; key: string };
    const res = () =>
      request(cached.callback())
        .get(`/checkstatus/${uniq('none')}`)
        .set('X-API-Key', k.key);
    expect((await res()).status).toBe(404);
    expect((await res()).status).toBe(404); // from the cache now
    expect(await noticed(() => talat(['apikey', 'revoke', k.id], db))).toMatchObject({ code: 0 });
    const next = await res();
    expect([next.status, next.body.body.details]).toEqual([401, { reason: 'revoked' }]);
  });

  it("link: the second key joins the first's account at once (cached gateways too); errors say why", async () => {
    const cached = await cachingGateway();
    const scopes = ['payments:write', 'payments:read'];
    const [a, b, c] = await Promise.all(
      ['a', 'b', 'c'].map((n) => createApiKey(stack.db, { name: uniq(n), scopes, mode: 'sandbox' })),
    );
    const orderId = uniq('ORD-link');
    const qr = (k: string) =>
      request(cached.callback())
        .post('/qrpayment')
        .set('X-API-Key', k)
        .send({ orderId, userId: 'u', amount: 12, customerId: 'c' });
    const status = (k: string) => request(cached.callback()).get(`/checkstatus/${orderId}`).set('X-API-Key', k);
    const first = await qr(a.key);
    expect(first.status).toBe(200);
    // b is its own account: its own payment of the order id (then cached as such)
    expect((await status(b.key)).status).toBe(404);

    const linked = await noticed(() => talat(['apikey', 'link', b.id, '--account', a.id], db));
    expect(linked).toEqual({ code: 0, stdout: `linked ${b.id} to account ${a.id}\n`, stderr: '' });
    const again = await qr(b.key);
    expect([again.status, again.body.body.code]).toEqual([409, 'CONFLICT']);
    expect(again.body.body.error).toContain(
      'already used by a payment of another API key of your account in this mode',
    );
    // the payment stays the first key's own: it reads it, the linked key does not (docs/security.md)
    const mine = await status(a.key);
    expect([mine.status, mine.body.body.paymentId]).toEqual([200, first.body.body.paymentId]);
    expect((await status(b.key)).status).toBe(404);
    const text = await talat(['apikey', 'list'], db);
    expect(text.stdout.split('\n').find((l) => l.startsWith(b.id))).toMatch(new RegExp(`account ${a.id}$`));

    // refusals change nothing, so they run side by side
    const [twice, unknown, self, member, moved] = await Promise.all([
      talat(['apikey', 'link', b.id, '--account', a.id], db),
      talat(['apikey', 'link', 'key_nope', '--account', a.id], db),
      talat(['apikey', 'link', c.id, '--account', c.id], db),
      talat(['apikey', 'link', a.id, '--account', c.id], db),
      talat(['apikey', 'link', b.id, '--account', c.id], db),
    ]);
    const json = await talat(['apikey', 'link', c.id, '--account', b.id, '--json'], db);
    const failed = (stderr: string) => ({
      code: 1,
      stdout: '',
      stderr: `talat apikey link: ${stderr}: nothing was linked\n`,
    });
    expect(twice).toEqual(failed(`API key ${b.id} is already in account ${a.id}`));
    expect(unknown).toEqual(failed('no API key key_nope'));
    expect(self).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('cannot be linked to itself') });
    expect(member).toEqual(failed(`API key ${a.id} is the account of ${b.id}: link those keys instead`));
    expect(moved).toEqual(failed(`API key ${b.id} is already linked to account ${a.id}`));
    // c joins the account b is in (a's), through b
    expect([json.code, JSON.parse(json.stdout)]).toEqual([0, { id: c.id, accountId: a.id }]);
    await stack.db('api_keys').where({ id: b.id }).update({ revoked_at: new Date() });
    const d = await createApiKey(stack.db, { name: uniq('d'), scopes, mode: 'live' });
    expect(await talat(['apikey', 'link', d.id, '--account', b.id], db)).toEqual(failed(`API key ${b.id} is revoked`));
  });

  it('revoking an unknown id fails: exit 1, the reason on stderr, nothing on stdout', async () => {
    const r = await talat(['apikey', 'revoke', 'key_doesnotexist'], db);
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'talat apikey revoke: no API key key_doesnotexist: nothing was revoked\n',
    });
  });

  it('an unknown scope or no name: exit 2 with the reason', async () => {
    const [scope, noName] = await Promise.all([
      talat(['apikey', 'create', '--name', 'x', '--scopes', 'payments:everything'], db),
      talat(['apikey', 'create', '--scopes', 'payments:read'], db),
    ]);
    expect(scope).toMatchObject({
      code: 2,
      stdout: '',
      stderr: expect.stringContaining('unknown scope(s): payments:everything'),
    });
    expect(noName).toMatchObject({ code: 2, stderr: expect.stringContaining("required option '--name <name>'") });
  });

  it('`npm run -s apikey -- create ... | tail -1` is the key (README "Try it")', async () => {
    const r = await start(
      'bash',
      [
        '-c',
        'KEY=$(npm run -s apikey -- create --name demo --scopes payments:write,payments:read --sandbox | tail -1) && echo "$KEY"',
      ],
      db,
    ).done;
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^tk_test_[A-Za-z0-9_-]{40}$/);
  });

  it('a bad setting exits 78 naming it; production without DATABASE_URL too', async () => {
    const bad = await talat(['apikey', 'list'], { ...db, PG_PORT: 'abc' });
    expect(bad).toMatchObject({ code: 78, stdout: '', stderr: expect.stringContaining('PG_PORT') });
    const prod = await talat(['apikey', 'list'], { NODE_ENV: 'production' });
    expect(prod).toMatchObject({ code: 78, stderr: expect.stringContaining('DATABASE_URL: required in production') });
  });
});

describe('talat promptpay', () => {
  const payload = '00020101021229370016A000000677010111011300668012345675802TH5303764540510.00630431BF';

  it('builds a payload, alone on the last line, and --json; the npm alias too', async () => {
    const [built, json, alias] = await Promise.all([
      talat(['promptpay', '--id', '0801234567', '--amount', '10']),
      talat(['promptpay', '--id', '0801234567', '--amount', '10', '--json']),
      start('npm', ['run', '-s', 'promptpay', '--', '--id', '0801234567', '--amount', '10']).done,
    ]);
    expect(built).toEqual({ code: 0, stdout: `${payload}\n`, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual({ payload });
    expect(alias).toMatchObject({ code: 0, stdout: `${payload}\n` });
  });

  it('refuses an id that cannot be a PromptPay account: exit 2, the reason, no payload', async () => {
    const [short, letters, ...good] = await Promise.all([
      talat(['promptpay', '--id', '12345']),
      talat(['promptpay', '--id', '08O1234567']),
      talat(['promptpay', '--id', '+66-89-123-4567']),
      talat(['promptpay', '--id', '1111111111111']),
      talat(['promptpay', '--id', '012345678901234']),
    ]);
    expect(short).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'talat promptpay: --id: 12345 cannot be a PromptPay account: it has 5 digits; a PromptPay id is a mobile number (10 digits from 0, or +66 and 9), a national or tax id (13 digits) or an e-wallet id (15 digits)\n',
    });
    expect(letters).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('is not a PromptPay id') });
    expect(good.map((r) => r.code)).toEqual([0, 0, 0]);
  });

  it('talat --version prints the version of package.json', async () => {
    const version = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string })
      .version;
    expect(await talat(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('--parse: exit 0 with a valid CRC, exit 1 with a wrong one (and why on stderr)', async () => {
    const bad = `${payload.slice(0, -1)}0`;
    const [good, wrong, wrongJson, notOne, neither] = await Promise.all([
      talat(['promptpay', '--parse', payload]),
      talat(['promptpay', '--parse', bad]),
      talat(['promptpay', '--parse', bad, '--json']),
      talat(['promptpay', '--parse', 'hello']),
      talat(['promptpay', '--amount', '10']),
    ]);
    expect(good).toMatchObject({ code: 0, stdout: expect.stringMatching(/CRC valid\n$/), stderr: '' });
    expect(wrong).toMatchObject({
      code: 1,
      stdout: expect.stringMatching(/CRC INVALID\n$/),
      stderr: 'talat promptpay: the CRC is wrong: the payload was altered or mistyped\n',
    });
    expect(JSON.parse(wrongJson.stdout)).toMatchObject({ crcValid: false });
    expect(wrongJson.code).toBe(1);
    expect(notOne).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('talat promptpay: not a PromptPay payload'),
    });
    expect(neither).toMatchObject({ code: 2, stderr: 'talat promptpay: give --id or --biller\n' });
  });
});

describe('talat migrate and seed, npx knex migrate:list', () => {
  const name = `talat_cli_w${process.env.JEST_WORKER_ID ?? '1'}`;
  let fresh: Record<string, string>;
  beforeAll(async () => {
    const admin = new Client({ connectionString: process.env.TALAT_TEST_PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    await createDatabaseIfMissing(process.env.TALAT_TEST_PG_ADMIN_URL!, name);
    fresh = { DATABASE_URL: testDatabaseUrl(name) };
  });
  afterAll(async () => {
    const admin = new Client({ connectionString: process.env.TALAT_TEST_PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  it('migrate:list names each pending migration; talat migrate --json applies them; seed --json', async () => {
    const names = (await migrationSource.getMigrations([])).map((m) => migrationSource.getMigrationName(m));
    const pending = await start('npx', ['knex', 'migrate:list'], fresh).done;
    expect(pending.code).toBe(0);
    expect(pending.stdout).toContain(`Found ${names.length} Pending Migration file/files.`);
    expect(pending.stdout).not.toContain('undefined');
    for (const n of names) expect(pending.stdout).toContain(n);

    const migrated = await talat(['migrate', '--seed-if-empty', '--json'], fresh);
    expect(migrated.code).toBe(0);
    const m = JSON.parse(migrated.stdout) as { applied: string[]; seeded: Record<string, number> | null };
    expect(m.applied).toEqual(names);
    expect(m.seeded).toMatchObject({ products: expect.any(Number) });
    const again = await talat(['migrate'], fresh);
    expect(again).toEqual({ code: 0, stdout: 'database is up to date\n', stderr: '' });
    const seeded = await talat(['seed', '--json'], fresh);
    expect(JSON.parse(seeded.stdout)).toEqual(m.seeded);

    const done = await start('npx', ['knex', 'migrate:list'], fresh).done;
    expect(done.stdout).toContain(`Found ${names.length} Completed Migration file/files.`);
    expect(done.stdout).toContain('No Pending Migration files Found.');
  });

  it('a database that does not answer: exit 1 with the reason on stderr', async () => {
    const r = await talat(['migrate'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/talat' });
    expect(r).toMatchObject({ code: 1, stdout: '', stderr: expect.stringMatching(/^talat migrate: .*ECONNREFUSED/) });
  });
});
