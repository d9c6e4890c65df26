/**
 * `npm run apikey -- create --name N --scopes a,b [--sandbox]`: a new key, printed once, alone on
 * the last line (only its hash is stored).
 * `npm run apikey -- list`: the keys (id, prefix, name, mode, scopes, created, revoked).
 * `npm run apikey -- revoke <id>`: revoke a key (it is refused with 401 from then on).
 */
import { SCOPES } from '../domain/api-keys';
import { createApiKey, listApiKeys, revokeApiKey } from '../http/middleware/api-key';
import { fail, withDb } from './context';
import { runsAsCommand } from './entry';

const USAGE = `usage:
  npm run apikey -- create --name <name> --scopes <scope,scope,...> [--sandbox]
  npm run apikey -- list
  npm run apikey -- revoke <key id>
scopes: ${SCOPES.join(', ')}`;

export function parseArgs(argv: string[]): { cmd: string; flags: Record<string, string | true>; rest: string[] } {
  const [cmd = '', ...args] = argv;
  const flags: Record<string, string | true> = {};
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) rest.push(a);
    else if (m[2] !== undefined) flags[m[1]] = m[2];
    else if (m[1] === 'sandbox' || args[i + 1] === undefined || args[i + 1].startsWith('--')) flags[m[1]] = true;
    else flags[m[1]] = args[++i];
  }
  return { cmd, flags, rest };
}

async function main() {
  const { cmd, flags, rest } = parseArgs(process.argv.slice(2));
  if (cmd === 'create') {
    if (typeof flags.name !== 'string') fail(`--name is required\n${USAGE}`);
    if (typeof flags.scopes !== 'string') fail(`--scopes is required\n${USAGE}`);
    const name = flags.name as string;
    const scopes = (flags.scopes as string).split(',');
    await withDb(async (db) => {
      let created;
      try {
        created = await createApiKey(db, { name, scopes, mode: flags.sandbox ? 'sandbox' : 'live' });
      } catch (e) {
        fail(`${(e as Error).message}\n${USAGE}`);
      }
      process.stdout.write(
        `created ${created.id} (${created.mode}) "${created.name}" scopes ${created.scopes.join(',')}\n` +
          'the key is shown only now; store it safely:\n' +
          `${created.key}\n`,
      );
    });
  } else if (cmd === 'list') {
    await withDb(async (db) => {
      const keys = await listApiKeys(db);
      if (keys.length === 0) process.stdout.write('no API keys\n');
      for (const k of keys) {
        process.stdout.write(
          [
            k.id,
            `${k.prefix}...`,
            k.mode,
            JSON.stringify(k.name),
            k.scopes.join(','),
            k.created_at.toISOString(),
            k.revoked_at ? `revoked ${k.revoked_at.toISOString()}` : 'active',
          ].join('  ') + '\n',
        );
      }
    });
  } else if (cmd === 'revoke') {
    const id = rest[0];
    if (!id) fail(`revoke needs a key id\n${USAGE}`);
    await withDb(async (db) => {
      if (!(await revokeApiKey(db, id))) fail(`no API key ${id}`);
      process.stdout.write(`revoked ${id}\n`);
    });
  } else {
    fail(USAGE);
  }
}

if (runsAsCommand(module)) void main();
