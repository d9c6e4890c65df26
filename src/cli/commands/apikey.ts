/**
 * `talat apikey create --name N --scopes a,b [--sandbox]`: a new key, printed once, alone on the
 * last line (only its hash is stored). `talat apikey list`: the keys without their secret.
 * `talat apikey revoke <id>`: refused with 401 from then on; an unknown id fails (exit 1).
 * `talat apikey link <id> --account <keyId>`: the key joins that key's account (order ids).
 */
import type { Command } from 'commander';
import { SCOPES } from '../../domain/api-keys';
import { createApiKey, linkApiKey, listApiKeys, revokeApiKey } from '../../http/middleware/api-key';
import { CliError, output, usage, withDb } from '../context';

export function apikeyCommand(program: Command): void {
  const apikey = program
    .command('apikey')
    .description('create, list, revoke and link API keys (on the database of DATABASE_URL, or the embedded one)');

  apikey
    .command('create')
    .description('a new API key, shown only now: alone on the last line')
    .requiredOption('--name <name>', 'what the key is for (1 to 100 characters)')
    .requiredOption('--scopes <scopes>', `comma-separated: ${SCOPES.join(', ')}`)
    .option('--sandbox', 'a sandbox key (tk_test_...): its payments go to the sandbox providers')
    .option('--json', 'print the key and its fields as JSON')
    .action(async (o: { name: string; scopes: string; sandbox?: boolean; json?: boolean }) => {
      await withDb(async (db) => {
        let k;
        try {
          k = await createApiKey(db, {
            name: o.name,
            scopes: o.scopes.split(','),
            mode: o.sandbox ? 'sandbox' : 'live',
          });
        } catch (e) {
          throw usage((e as Error).message);
        }
        output(
          o.json,
          { id: k.id, key: k.key, prefix: k.prefix, name: k.name, mode: k.mode, scopes: k.scopes },
          () =>
            `created ${k.id} (${k.mode}) "${k.name}" scopes ${k.scopes.join(',')}\n` +
            `the key is shown only now; store it safely:\n${k.key}`,
        );
      });
    });

  apikey
    .command('list')
    .description('every key: id, prefix, mode, name, scopes, created, active or revoked (never the key)')
    .option('--json', 'print the keys as a JSON array')
    .action(async (o: { json?: boolean }) => {
      await withDb(async (db) => {
        const keys = (await listApiKeys(db)).map((k) => ({
          id: k.id,
          prefix: k.prefix,
          mode: k.mode,
          name: k.name,
          scopes: k.scopes,
          createdAt: k.created_at.toISOString(),
          revokedAt: k.revoked_at ? k.revoked_at.toISOString() : null,
          accountId: k.account_id ?? k.id,
        }));
        output(o.json, keys, () =>
          keys.length === 0
            ? 'no API keys'
            : keys
                .map((k) =>
                  [
                    k.id,
                    `${k.prefix}...`,
                    k.mode,
                    JSON.stringify(k.name),
                    k.scopes.join(','),
                    k.createdAt,
                    k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
                    ...(k.accountId !== k.id ? [`account ${k.accountId}`] : []),
                  ].join('  '),
                )
                .join('\n'),
        );
      });
    });

  apikey
    .command('revoke')
    .description('revoke a key: every request with it is refused (401) from then on')
    .argument('<id>', 'the key id (key_..., from `talat apikey list`)')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      await withDb(async (db) => {
        if (!(await revokeApiKey(db, id))) throw new CliError(`no API key ${id}: nothing was revoked`);
        output(o.json, { id, revoked: true }, () => `revoked ${id}`);
      });
    });

  apikey
    .command('link')
    .description(
      "put a key into another key's account: order ids are unique per account and mode, so the two " +
        "keys' new payments share them (the same order id from both is 409); earlier payments keep theirs",
    )
    .argument('<id>', 'the key to link (key_..., from `talat apikey list`): its own account, with no other key in it')
    .requiredOption('--account <keyId>', 'a key of the account to join (its account is the one joined)')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, o: { account: string; json?: boolean }) => {
      if (id === o.account) throw usage(`a key cannot be linked to itself (${id})`);
      await withDb(async (db) => {
        const r = await linkApiKey(db, id, o.account);
        if ('refused' in r) throw new CliError(`${r.refused}: nothing was linked`);
        output(o.json, { id, accountId: r.accountId }, () => `linked ${id} to account ${r.accountId}`);
      });
    });
}
